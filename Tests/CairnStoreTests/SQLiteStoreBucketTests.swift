// The bucket tables of migration v10, on both engines: buckets with their members, items with a photo that must be an
// upload of whoever sets it, the friendship cleanup, and accounts deleted by the guest purge taking their sole-owned
// buckets (and items) with them while co-owned buckets stay. Everything is read back from a reopened store, as after
// a restart. The media collector keeping items' photos is the SQLite store's media port (its own test here).
import CairnBuckets
import CairnCore
import CairnSQL
import CairnSessions
import Foundation
import GRDB
import Testing

@testable import CairnStore

@Suite(.timeLimit(.minutes(5)))
struct SQLiteStoreBucketTests {
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 7, 7, 7]

    func users(_ store: any EngineStore, guests: Bool = false) async throws -> [Int64] {
        var ids: [Int64] = []
        for name in ["anna", "bob", "cleo"] {
            ids.append(
                try await store.createUser(
                    NewUser(username: name, name: name, passwordHash: nil, isGuest: guests, createdAt: 1)
                ).id)
        }
        return ids
    }

    /// An upload row named `photo` of `owner` (the media port is not what these tests are about).
    static func upload(_ store: any EngineStore, owner: Int64) async throws -> String {
        try await store.execute(
            "INSERT INTO media (id, owner_id, content_type, size, created_at) VALUES ('photo', ?, 'image/png', 11, 1)",
            [owner])
        return "photo"
    }

    @Test(arguments: StoreEngine.available)
    func bucketsMembersAndItemsRoundTrip(engine: StoreEngine) async throws {
        try await engine.withDatabase { database in
            var store = try database.open()
            let u = try await users(store)
            let trips = try await store.createBucket(name: "Trips", privacy: .private, owner: u[0], at: 5)
            let open = try await store.createBucket(name: "Open", privacy: .friends, owner: u[1], at: 6)
            #expect(try await store.setMember(bucket: trips.id, user: u[1], role: .viewer)?.viewers == [u[1]])
            #expect(try await store.setMember(bucket: 999, user: u[1], role: .viewer) == nil)
            let photo = try await Self.upload(store, owner: u[0])
            await #expect(throws: BucketStoreError.mediaNotFound) {
                try await store.createItem(
                    bucket: trips.id, name: "Tent", note: nil, photo: MediaRef(id: photo, owner: u[1]), at: 7)
            }
            let tent = try await store.createItem(
                bucket: trips.id, name: "Tent", note: "green", photo: MediaRef(id: photo, owner: u[0]), at: 7)
            let kayak = try await store.createItem(bucket: trips.id, name: "Kayak", note: nil, photo: nil, at: 8)
            await #expect(throws: BucketStoreError.mediaNotFound) {
                try await store.updateItem(id: kayak.id, changes: ItemChanges(name: "K", photo: photo), by: u[1])
            }
            #expect(try await store.item(id: kayak.id)?.name == "Kayak")  // the refused change wrote nothing
            let ticked = try await store.updateItem(
                id: kayak.id, changes: ItemChanges(note: "red", done: true), by: u[1])
            #expect(ticked?.done == true && ticked?.note == "red")
            #expect(try await store.updateItem(id: tent.id, changes: ItemChanges(note: ""), by: u[0])?.note == nil)
            #expect(try await store.updateItem(id: 999, changes: ItemChanges(done: true), by: u[0]) == nil)
            database.close(store)

            store = try database.open()
            #expect(try await store.bucket(id: trips.id)?.members == [u[0]: .owner, u[1]: .viewer])
            #expect(try await store.items(bucket: trips.id).map(\.name) == ["Tent", "Kayak"])
            #expect(try await store.item(id: tent.id)?.photo == MediaRef(id: photo, owner: u[0]))
            // Bob sees Trips as a member and Open as its owner; Cleo sees Open only through her friend Bob.
            #expect(try await store.buckets(member: u[1], friends: []).map(\.id) == [trips.id, open.id])
            #expect(try await store.buckets(member: u[2], friends: [u[1]]).map(\.id) == [open.id])
            #expect(try await store.buckets(member: u[2], friends: [u[0]]).isEmpty)
            #expect(try await store.buckets(ownedBy: u[0]).map(\.name) == ["Trips"])
            // A friendship ending takes Bob's viewer share of Anna's buckets, nothing else.
            #expect(try await store.removeViewer(u[1], fromBucketsOwnedBy: u[0]) == [trips.id])
            #expect(try await store.bucket(id: trips.id)?.members == [u[0]: .owner])
            #expect(try await store.updateBucket(id: open.id, name: "Wide", privacy: .private)?.privacy == .private)
            #expect(try await store.updateBucket(id: open.id, name: nil, privacy: .friends)?.name == "Wide")
            #expect(try await store.updateBucket(id: 999, name: "x", privacy: nil) == nil)
            try await store.deleteBucket(id: trips.id)
            #expect(try await store.bucket(id: trips.id) == nil)
            #expect(try await store.item(id: kayak.id) == nil)
        }
    }

    @Test func theMediaCollectorKeepsThePhotoAnItemNames() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SQLiteStore(directory: dir)
        let u = try await users(store)
        let trips = try await store.createBucket(name: "Trips", privacy: .private, owner: u[0], at: 5)
        let photo = try await store.storeMedia(bytes: Self.png, owner: u[0], contentType: "image/png", createdAt: 1)
        let tent = try await store.createItem(
            bucket: trips.id, name: "Tent", note: nil, photo: MediaRef(id: photo, owner: u[0]), at: 7)
        #expect(try await store.collectGarbageMedia(uploadedBefore: 100) == 0)
        #expect(try await store.mediaExists(id: photo, owner: u[0]))
        try await store.deleteItem(id: tent.id)
        #expect(try await store.collectGarbageMedia(uploadedBefore: 100) == 1)
        try store.close()
    }

    @Test(arguments: StoreEngine.available)
    func purgedAccountsTakeTheirSoleOwnedBucketsAlong(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            let u = try await users(store, guests: true)
            let alone = try await store.createBucket(name: "Alone", privacy: .private, owner: u[0], at: 5)
            let shared = try await store.createBucket(name: "Shared", privacy: .private, owner: u[0], at: 5)
            _ = try await store.setMember(bucket: shared.id, user: u[1], role: .owner)
            _ = try await store.setMember(bucket: alone.id, user: u[2], role: .viewer)
            let item = try await store.createItem(bucket: alone.id, name: "x", note: nil, photo: nil, at: 6)
            let purge = try await store.purgeGuests(seenBefore: 1_000, sparing: [u[1], u[2]])
            #expect(purge.users == [u[0]])
            #expect(purge.items == [item.id])
            #expect(try await store.bucket(id: alone.id) == nil)
            #expect(try await store.item(id: item.id) == nil)
            #expect(try await store.bucket(id: shared.id)?.members == [u[1]: .owner])
            // Removing the last owner removes the bucket too.
            #expect(try await store.removeMember(bucket: shared.id, user: u[1]) == nil)
        }
    }
}
