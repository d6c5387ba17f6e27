// Migration v12, on both engines: items' `hidden` and `alert` flags, the items with alerts on and their owners for the
// hub's start, each user's safe zones with the per-user count checked with the insert, and the limits on buckets
// owned and items per bucket, all read back from a reopened store, as after a restart.
import CairnBuckets
import CairnCore
import CairnSessions
import CairnTrackers
import Foundation
import Testing

@testable import CairnStore

@Suite(.timeLimit(.minutes(5)))
struct SQLiteStoreItemAlertTests {
    func user(_ store: any EngineStore, _ name: String) async throws -> Int64 {
        try await store.createUser(
            NewUser(username: name, name: name, passwordHash: nil, isGuest: false, createdAt: 1)
        ).id
    }

    @Test(arguments: StoreEngine.available)
    func flagsAreStoredAndAlertedItemsLoadWithTheirOwners(engine: StoreEngine) async throws {
        try await engine.withDatabase { database in
            var store = try database.open()
            let anna = try await user(store, "anna")
            let ben = try await user(store, "ben")
            let gear = try await store.createBucket(name: "Gear", privacy: .private, owner: anna, at: 2)
            _ = try await store.setMember(bucket: gear.id, user: ben, role: .owner)
            let bike = try await store.createItem(bucket: gear.id, name: "Bike", note: nil, photo: nil, at: 3)
            let bag = try await store.createItem(bucket: gear.id, name: "Bag", note: nil, photo: nil, at: 4)
            #expect(bike.hidden == false && bike.alert == false)
            let changed = try await store.updateItem(
                id: bike.id, changes: ItemChanges(hidden: true, alert: true), by: anna)
            #expect(changed?.hidden == true && changed?.alert == true)
            _ = try await store.updateItem(id: bag.id, changes: ItemChanges(hidden: true), by: anna)
            database.close(store)

            store = try database.open()
            #expect(
                try await store.items(bucket: gear.id).map { [$0.hidden, $0.alert] } == [[true, true], [true, false]])
            #expect(
                try store.loadItemAlerts() == [ItemAlertRecord(item: bike.id, bucket: gear.id, owners: [anna, ben])])
            #expect(try await store.itemAlerts() == store.loadItemAlerts())  // a catch-up read sees the same
            _ = try await store.updateItem(id: bike.id, changes: ItemChanges(alert: false), by: anna)
            #expect(try store.loadItemAlerts().isEmpty)
            #expect(try await store.itemAlerts().isEmpty)
        }
    }

    @Test(arguments: StoreEngine.available)
    func safeZonesAreCountedPerUserAndRemovedByTheirOwnerOnly(engine: StoreEngine) async throws {
        try await engine.withDatabase { database in
            var store = try database.open()
            let anna = try await user(store, "anna")
            let ben = try await user(store, "ben")
            let home = try await store.addSafeZone(
                owner: anna, name: "Home", lat: 48.1, lon: 2.2, radius: 80, limit: 2)
            #expect(home == SafeZone(id: home.id, owner: anna, name: "Home", lat: 48.1, lon: 2.2, radius: 80))
            let work = try await store.addSafeZone(
                owner: anna, name: "Work", lat: 48.2, lon: 2.3, radius: 200, limit: 2)
            await #expect(throws: SafeZoneStoreError.tooMany(limit: 2)) {
                try await store.addSafeZone(owner: anna, name: "Gym", lat: 48, lon: 2, radius: 50, limit: 2)
            }
            let his = try await store.addSafeZone(owner: ben, name: "Home", lat: 1, lon: 1, radius: 10, limit: 2)
            #expect(try await store.removeSafeZone(id: home.id, owner: ben) == false)
            database.close(store)

            store = try database.open()
            #expect(try store.loadSafeZones().map(\.id) == [home.id, work.id, his.id])
            #expect(try store.loadSafeZones().first == home)
            #expect(try await store.removeSafeZone(id: home.id, owner: anna))
            #expect(try await store.removeSafeZone(id: home.id, owner: anna) == false)
            #expect(try store.loadSafeZones().map(\.name) == ["Work", "Home"])
            // Zones go with their account.
            try await store.execute("DELETE FROM users WHERE id = ?", [ben])
            #expect(try store.loadSafeZones().map(\.id) == [work.id])
        }
    }

    @Test(arguments: StoreEngine.available)
    func bucketsOwnedAndItemsPerBucketAreLimitedInTheStore(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            let anna = try await user(store, "anna")
            let ben = try await user(store, "ben")
            let one = try await store.createBucket(name: "One", privacy: .private, owner: anna, at: 1, limit: 2)
            _ = try await store.createBucket(name: "Two", privacy: .private, owner: anna, at: 1, limit: 2)
            await #expect(throws: BucketStoreError.tooManyBuckets(limit: 2)) {
                try await store.createBucket(name: "Three", privacy: .private, owner: anna, at: 1, limit: 2)
            }
            // Buckets Anna only views do not count; Ben has none of his own.
            _ = try await store.setMember(bucket: one.id, user: ben, role: .viewer)
            _ = try await store.createBucket(name: "Ben's", privacy: .private, owner: ben, at: 1, limit: 1)
            _ = try await store.createItem(bucket: one.id, name: "a", note: nil, photo: nil, at: 2, limit: 1)
            await #expect(throws: BucketStoreError.tooManyItems(limit: 1)) {
                try await store.createItem(bucket: one.id, name: "b", note: nil, photo: nil, at: 2, limit: 1)
            }
            #expect(try await store.items(bucket: one.id).count == 1)
        }
    }
}
