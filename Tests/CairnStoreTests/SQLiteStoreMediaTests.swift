// Media in the store: round trip, one file per content, garbage collection of unreferenced uploads (and only
// those), and the race between collecting a file and uploading the same content again.
import CairnCrypto
import CairnDomain
import Foundation
import GRDB
import Testing

@testable import CairnStore

struct SQLiteStoreMediaTests {
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3]

    private func user(_ store: SQLiteStore, _ name: String) async throws -> Int64 {
        try await store.createUser(NewUser(username: name, name: name, passwordHash: nil, isGuest: true, createdAt: 1))
            .id
    }

    private func relic(_ store: SQLiteStore, creator: Int64, media: String) throws {
        try store.pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO relics (creator_id, lat, lon, radius, text, media_id, created_at) VALUES (?, 0, 0,
                      10, 'x', ?, 1)
                    """, arguments: [creator, media])
        }
    }

    private func rows(_ store: SQLiteStore) throws -> Int {
        try store.pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM media") ?? 0 }
    }

    @Test func anUploadThatWouldExceedItsOwnersQuotaIsRefusedInItsTransaction() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SQLiteStore(directory: dir)
        let alice = try await user(store, "alice")
        let bob = try await user(store, "bob")
        let first = Self.png + [UInt8](repeating: 1, count: 40)
        let second = Self.png + [UInt8](repeating: 2, count: 40)
        let quota = first.count + 10
        _ = try await store.storeMedia(
            bytes: first, owner: alice, contentType: "image/png", createdAt: 1,
            quotaBytes: quota)
        await #expect(throws: MediaStoreError.quotaExceeded) {
            _ = try await store.storeMedia(
                bytes: second, owner: alice, contentType: "image/png", createdAt: 2,
                quotaBytes: quota)
        }
        #expect(try await store.mediaExists(id: SQLiteStore.hex(Digest.sha256(second)), owner: alice) == false)
        // The same bytes again do not count twice, and another user has a quota of their own.
        _ = try await store.storeMedia(
            bytes: first, owner: alice, contentType: "image/png", createdAt: 3,
            quotaBytes: quota)
        _ = try await store.storeMedia(
            bytes: second, owner: bob, contentType: "image/png", createdAt: 4,
            quotaBytes: quota)
    }

    @Test func storesAndFindsMediaByContentHash() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SQLiteStore(directory: dir)
        let alice = try await user(store, "alice")
        let id = try await store.storeMedia(bytes: Self.png, owner: alice, contentType: "image/png", createdAt: 10)
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
        try store.close()

        // Reopened: still there.
        let again = try SQLiteStore(directory: dir)
        #expect(try await again.media(id: id)?.size == Self.png.count)
        try again.close()
    }

    @Test func sameContentTwiceIsOneFileAndOneRowPerOwner() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SQLiteStore(directory: dir)
        let alice = try await user(store, "alice")
        let bob = try await user(store, "bob")
        let a = try await store.storeMedia(bytes: Self.png, owner: alice, contentType: "image/png", createdAt: 10)
        let b = try await store.storeMedia(bytes: Self.png, owner: alice, contentType: "image/png", createdAt: 11)
        let c = try await store.storeMedia(bytes: Self.png, owner: bob, contentType: "image/png", createdAt: 12)
        #expect(a == b && b == c)
        #expect(try rows(store) == 2)
        #expect(store.mediaFiles.ids(modifiedBefore: Int64.max) == [a])
        try store.close()
    }

    @Test func garbageCollectionKeepsReferencedAndRecentMedia() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SQLiteStore(directory: dir)
        let alice = try await user(store, "alice")
        let bob = try await user(store, "bob")
        let kept = try await store.storeMedia(
            bytes: Self.png + [1], owner: alice, contentType: "image/png", createdAt: 10)
        let unused = try await store.storeMedia(
            bytes: Self.png + [2], owner: alice, contentType: "image/png", createdAt: 10)
        let recent = try await store.storeMedia(
            bytes: Self.png + [3], owner: alice, contentType: "image/png", createdAt: 500)
        // Bob's relic names Alice's upload, but a relic keeps only its own creator's upload alive.
        let borrowed = try await store.storeMedia(
            bytes: Self.png + [4], owner: alice, contentType: "image/png", createdAt: 10)
        try relic(store, creator: alice, media: kept)
        try relic(store, creator: bob, media: borrowed)

        #expect(try await store.collectGarbageMedia(uploadedBefore: 100) == 2)
        #expect(try await store.media(id: kept) != nil)
        #expect(try await store.media(id: recent) != nil)
        #expect(try await store.media(id: unused) == nil)
        #expect(try await store.media(id: borrowed) == nil)
        #expect(!store.mediaFiles.contains(unused, size: Self.png.count + 1))
        #expect(!store.mediaFiles.contains(borrowed, size: Self.png.count + 1))
        #expect(try await store.collectGarbageMedia(uploadedBefore: 100) == 0)
        try store.close()
    }

    @Test func aSharedFileStaysWhileAnotherOwnerStillNamesIt() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SQLiteStore(directory: dir)
        let alice = try await user(store, "alice")
        let bob = try await user(store, "bob")
        let id = try await store.storeMedia(bytes: Self.png, owner: alice, contentType: "image/png", createdAt: 10)
        _ = try await store.storeMedia(bytes: Self.png, owner: bob, contentType: "image/png", createdAt: 500)
        #expect(try await store.collectGarbageMedia(uploadedBefore: 100) == 1)
        #expect(try await store.mediaExists(id: id, owner: alice) == false)
        #expect(try await store.media(id: id) != nil)
        #expect(store.mediaFiles.contains(id, size: Self.png.count))
        try store.close()
    }

    @Test func orphanFilesAreCollected() async throws {
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

    @Test func anUploadRestoresAFileCollectedAfterItsDedupCheck() async throws {
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

    @Test func concurrentUploadsAndCollectionsNeverLeaveARowWithoutItsFile() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SQLiteStore(directory: dir)
        let alice = try await user(store, "alice")
        for round in 0..<40 {
            async let upload = store.storeMedia(
                bytes: Self.png, owner: alice, contentType: "image/png",
                createdAt: Int64(round))
            async let collect = store.collectGarbageMedia(uploadedBefore: 1_000)
            _ = try await (upload, collect)
            let named = try await store.pool.read { try String.fetchAll($0, sql: "SELECT id FROM media") }
            for id in named { #expect(store.mediaFiles.contains(id, size: Self.png.count), "round \(round)") }
        }
        try store.close()
    }
}
