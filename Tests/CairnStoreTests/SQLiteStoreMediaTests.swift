import CairnCore
// Media in the store: round trip, one copy per content, garbage collection of unreferenced uploads (and only
// those), and uploads racing collections, on both engines; SQLite's own files (an orphan left by a crash, the race
// between collecting a file and uploading the same content again) on SQLite only. PostgreSQL's sharing between
// nodes: PostgresStoreMediaTests.
import CairnCrypto
import CairnMedia
import CairnSessions
import Foundation
import GRDB
import Testing

@testable import CairnStore

@Suite(.timeLimit(.minutes(5)))
struct SQLiteStoreMediaTests {
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3]

    private func user(_ store: any EngineStore, _ name: String) async throws -> Int64 {
        try await store.createUser(NewUser(username: name, name: name, passwordHash: nil, isGuest: true, createdAt: 1))
            .id
    }

    private func relic(_ store: any EngineStore, creator: Int64, media: String) async throws {
        try await store.sqlExecute(
            "INSERT INTO relics (creator_id, lat, lon, radius, text, media_id, created_at) "
                + "VALUES (?, 0, 0, 10, 'x', ?, 1)",
            .int(creator), .text(media))
    }

    private func rows(_ store: any EngineStore) async throws -> Int64 {
        try await store.sqlInteger("SELECT COUNT(*) FROM media") ?? 0
    }

    private func store(
        _ store: any EngineStore, _ bytes: [UInt8], owner: Int64, at: Int64, quota: Int? = nil
    ) async throws -> String {
        try await store.storeMedia(
            bytes: bytes, owner: owner, contentType: "image/png", createdAt: at, quotaBytes: quota)
    }

    @Test(arguments: StoreEngine.available)
    func anUploadThatWouldExceedItsOwnersQuotaIsRefusedInItsTransaction(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            let alice = try await user(store, "alice")
            let bob = try await user(store, "bob")
            let first = Self.png + [UInt8](repeating: 1, count: 40)
            let second = Self.png + [UInt8](repeating: 2, count: 40)
            let quota = first.count + 10
            _ = try await self.store(store, first, owner: alice, at: 1, quota: quota)
            await #expect(throws: MediaStoreError.quotaExceeded) {
                _ = try await self.store(store, second, owner: alice, at: 2, quota: quota)
            }
            let refused = SQLiteStore.hex(Digest.sha256(second))
            #expect(try await store.mediaExists(id: refused, owner: alice) == false)
            #expect(try await store.media(id: refused) == nil)
            // The same bytes again do not count twice, and another user has a quota of their own.
            _ = try await self.store(store, first, owner: alice, at: 3, quota: quota)
            _ = try await self.store(store, second, owner: bob, at: 4, quota: quota)
        }
    }

    @Test(arguments: StoreEngine.available)
    func twoUploadsAtOnceFromTwoProcessesCannotBothSlipUnderTheQuota(engine: StoreEngine) async throws {
        try await engine.withReopening { open in
            let a = try open()
            let b = try open()
            let alice = try await user(a, "alice")
            for round in 0..<10 {
                let first = Self.png + [UInt8](repeating: UInt8(2 * round), count: 40)
                let second = Self.png + [UInt8](repeating: UInt8(2 * round + 1), count: 40)
                let quota = first.count * (round + 1) + 10  // room for one more upload, not two
                async let one = try? self.store(a, first, owner: alice, at: 1, quota: quota)
                async let other = try? self.store(b, second, owner: alice, at: 1, quota: quota)
                let stored = await [one, other].compactMap { $0 }
                #expect(stored.count == 1, "round \(round)")
                #expect(try await a.sqlInteger("SELECT COUNT(*) FROM media") == Int64(round + 1))
            }
        }
    }

    @Test(arguments: StoreEngine.available)
    func storesAndFindsMediaByContentHash(engine: StoreEngine) async throws {
        try await engine.withReopening { open in
            let store = try open()
            let alice = try await user(store, "alice")
            let id = try await self.store(store, Self.png, owner: alice, at: 10)
            #expect(id == SQLiteStore.hex(Digest.sha256(Self.png)))
            #expect(MediaLinks.isMediaID(id))
            let found = try #require(try await store.media(id: id))
            #expect(found.contentType == "image/png")
            #expect(found.size == Self.png.count)
            #expect(FileManager.default.contents(atPath: found.path) == Data(Self.png))
            #expect(try await store.mediaExists(id: id, owner: alice))
            #expect(try await store.mediaExists(id: id, owner: alice + 1) == false)
            #expect(try await store.media(id: String(repeating: "0", count: 64)) == nil)
            #expect(try await store.media(id: "../cairn.sqlite") == nil)
            store.closeForTest()

            // Reopened: still there.
            let again = try open()
            let reread = try #require(try await again.media(id: id))
            #expect(reread.size == Self.png.count)
            #expect(FileManager.default.contents(atPath: reread.path) == Data(Self.png))
        }
    }

    @Test(arguments: StoreEngine.available)
    func sameContentTwiceIsOneCopyAndOneRowPerOwner(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            let alice = try await user(store, "alice")
            let bob = try await user(store, "bob")
            let a = try await self.store(store, Self.png, owner: alice, at: 10)
            let b = try await self.store(store, Self.png, owner: alice, at: 11)
            let c = try await self.store(store, Self.png, owner: bob, at: 12)
            #expect(a == b && b == c)
            #expect(try await rows(store) == 2)
            #expect(try await store.mediaContentCount() == 1)
            // The second upload restarted Alice's grace period.
            #expect(try await store.sqlInteger("SELECT created_at FROM media WHERE owner_id = ?", .int(alice)) == 11)
        }
    }

    @Test(arguments: StoreEngine.available)
    func garbageCollectionKeepsReferencedAndRecentMedia(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            let alice = try await user(store, "alice")
            let bob = try await user(store, "bob")
            let kept = try await self.store(store, Self.png + [1], owner: alice, at: 10)
            let unused = try await self.store(store, Self.png + [2], owner: alice, at: 10)
            let recent = try await self.store(store, Self.png + [3], owner: alice, at: 500)
            // Bob's relic names Alice's upload, but a relic keeps only its own creator's upload alive.
            let borrowed = try await self.store(store, Self.png + [4], owner: alice, at: 10)
            try await relic(store, creator: alice, media: kept)
            try await relic(store, creator: bob, media: borrowed)

            #expect(try await store.collectGarbageMedia(uploadedBefore: 100) == 2)
            #expect(try await store.media(id: kept) != nil)
            #expect(try await store.media(id: recent) != nil)
            #expect(try await store.media(id: unused) == nil)
            #expect(try await store.media(id: borrowed) == nil)
            #expect(try await store.mediaContentRemains(unused) == false)
            #expect(try await store.mediaContentRemains(borrowed) == false)
            #expect(try await store.mediaContentRemains(kept))
            #expect(try await store.collectGarbageMedia(uploadedBefore: 100) == 0)
        }
    }

    @Test(arguments: StoreEngine.available)
    func aSharedCopyStaysWhileAnotherOwnerStillNamesIt(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            let alice = try await user(store, "alice")
            let bob = try await user(store, "bob")
            let id = try await self.store(store, Self.png, owner: alice, at: 10)
            _ = try await self.store(store, Self.png, owner: bob, at: 500)
            #expect(try await store.collectGarbageMedia(uploadedBefore: 100) == 1)
            #expect(try await store.mediaExists(id: id, owner: alice) == false)
            let found = try #require(try await store.media(id: id))
            #expect(FileManager.default.contents(atPath: found.path) == Data(Self.png))
        }
    }

    @Test func orphanFilesAreCollectedOnSQLite() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SQLiteStore(directory: dir)
        // A file without a row: what a crash between writing the file and committing the row leaves.
        let orphan = try await store.writeMediaFile(Self.png)
        #expect(try await store.collectGarbageMedia(uploadedBefore: 0) == 0)
        #expect(store.mediaFiles.contains(orphan, size: Self.png.count))  // too recent
        #expect(try await store.collectGarbageMedia(uploadedBefore: Int64.max) == 0)
        #expect(!store.mediaFiles.contains(orphan, size: Self.png.count))
        try store.close()
    }

    @Test func anUploadRestoresAFileCollectedAfterItsDedupCheckOnSQLite() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SQLiteStore(directory: dir)
        let alice = try await user(store, "alice")
        let bob = try await user(store, "bob")
        let id = try await store.storeMedia(bytes: Self.png, owner: alice, contentType: "image/png", createdAt: 10)
        // Bob's upload finds the file in place and skips writing it ...
        #expect(try await store.writeMediaFile(Self.png) == id)
        // ... then the collector removes Alice's old row and, as no row names it, the file ...
        #expect(try await store.collectGarbageMedia(uploadedBefore: 100) == 1)
        #expect(!store.mediaFiles.contains(id, size: Self.png.count))
        // ... and Bob's row is committed: the file must be back.
        try await store.commitMedia(id: id, bytes: Self.png, owner: bob, contentType: "image/png", createdAt: 200)
        let found = try #require(try await store.media(id: id))
        #expect(FileManager.default.contents(atPath: found.path) == Data(Self.png))
        try store.close()
    }

    @Test(arguments: StoreEngine.available)
    func concurrentUploadsAndCollectionsNeverLeaveARowWithoutItsContent(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            let alice = try await user(store, "alice")
            for round in 0..<40 {
                async let upload = self.store(store, Self.png, owner: alice, at: Int64(round))
                async let collect = store.collectGarbageMedia(uploadedBefore: 1_000)
                let (id, _) = try await (upload, collect)
                guard try await rows(store) > 0 else { continue }
                let found = try #require(try await store.media(id: id), "round \(round)")
                #expect(FileManager.default.contents(atPath: found.path) == Data(Self.png), "round \(round)")
            }
        }
    }
}
