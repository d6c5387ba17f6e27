// The tracker table of migration v11, on both engines: a device id unique across the hub, one tracker per item, only
// the key's digest stored, activation and unpairing, and a tracker going with its item (and its bucket). Read back
// from a reopened store, as after a restart.
import CairnDomain
import Foundation
import Testing

@testable import CairnStore

struct SQLiteStoreTrackerTests {
    @Test(arguments: StoreEngine.available)
    func pairActivateUnpairAndUniqueness(engine: StoreEngine) async throws {
        try await engine.withDatabase { database in
            var store = try database.open()
            let anna = try await store.createUser(
                NewUser(username: "anna", name: "anna", passwordHash: nil, isGuest: false, createdAt: 1)
            ).id
            let gear = try await store.createBucket(name: "Gear", privacy: .private, owner: anna, at: 2)
            let bike = try await store.createItem(bucket: gear.id, name: "Bike", note: nil, photo: nil, at: 3)
            let bag = try await store.createItem(bucket: gear.id, name: "Bag", note: nil, photo: nil, at: 4)
            let digest = [UInt8](repeating: 9, count: 32)
            let paired = try await store.pairTracker(item: bike.id, device: "dev-1", keyDigest: digest, at: 5)
            #expect(paired == TrackerRecord(id: paired.id, device: "dev-1", item: bike.id, active: false, created: 5))
            #expect(try await store.item(id: bike.id)?.tracker == paired.id)
            #expect(try await store.items(bucket: gear.id).map(\.tracker) == [paired.id, nil])
            await #expect(throws: TrackerStoreError.deviceTaken) {
                try await store.pairTracker(item: bag.id, device: "dev-1", keyDigest: digest, at: 6)
            }
            await #expect(throws: TrackerStoreError.itemTaken) {
                try await store.pairTracker(item: bike.id, device: "dev-2", keyDigest: digest, at: 6)
            }
            await #expect(throws: TrackerStoreError.itemNotFound) {
                try await store.pairTracker(item: 999, device: "dev-3", keyDigest: digest, at: 6)
            }
            #expect(try await store.setTrackerActive(id: paired.id, active: true)?.active == true)
            #expect(try await store.setTrackerActive(id: 999, active: true) == nil)
            #expect(paired.showsItems == false)
            #expect(try await store.setTrackerShowsItems(id: paired.id, shows: true)?.showsItems == true)
            #expect(try await store.tracker(id: paired.id)?.showsItems == true)
            #expect(try await store.setTrackerShowsItems(id: 999, shows: true) == nil)
            let other = try await store.pairTracker(item: bag.id, device: "dev-2", keyDigest: [1, 2, 3], at: 7)
            // The newest fix stays the latest; an equal time replaces; an older one is refused.
            #expect(try await store.recordTrackerFix(tracker: paired.id, fix: Fix(lat: 1, lon: 2, acc: 5, ts: 100)))
            #expect(try await store.recordTrackerFix(tracker: paired.id, fix: Fix(lat: 3, lon: 4, ts: 50)) == false)
            #expect(try await store.recordTrackerFix(tracker: paired.id, fix: Fix(lat: 5, lon: 6, bat: 80, ts: 100)))
            database.close(store)

            store = try database.open()
            let found = try #require(try await store.tracker(device: "dev-1"))
            #expect(found.record.active == true)
            #expect(found.keyDigest == digest)
            #expect(try await store.trackerFix(tracker: paired.id) == Fix(lat: 5, lon: 6, bat: 80, ts: 100))
            #expect(
                try store.loadTrackerPositions()
                    == [ItemPosition(item: bike.id, fix: Fix(lat: 5, lon: 6, bat: 80, ts: 100))])
            #expect(try await store.trackerFix(tracker: other.id) == nil)
            #expect(try await store.tracker(id: other.id)?.device == "dev-2")
            #expect(try await store.tracker(device: "nobody") == nil)
            #expect(try await store.unpairTracker(id: other.id))
            #expect(try await store.unpairTracker(id: other.id) == false)
            #expect(try await store.tracker(id: other.id) == nil)
            // A tracker goes with its item, and with its bucket.
            let again = try await store.pairTracker(item: bag.id, device: "dev-2", keyDigest: [7, 7, 7], at: 8)
            try await store.deleteItem(id: bike.id)
            #expect(try await store.tracker(id: paired.id) == nil)
            #expect(try await store.trackerFix(tracker: paired.id) == nil)
            try await store.deleteBucket(id: gear.id)
            #expect(try await store.tracker(id: again.id) == nil)
        }
    }

    /// Migration v14: what the ingest reads in one query (the tracker, its key's digest, its latest fix and its speed
    /// rejections) and commits in one transaction (the count, and the fix unless a newer one is stored); the count
    /// survives reopening and goes with the tracker.
    @Test(arguments: StoreEngine.available)
    func ingestStateIsReadTogetherAndTheRejectionCountIsKept(engine: StoreEngine) async throws {
        try await engine.withDatabase { database in
            var store = try database.open()
            let anna = try await store.createUser(
                NewUser(username: "anna", name: "anna", passwordHash: nil, isGuest: false, createdAt: 1)
            ).id
            let gear = try await store.createBucket(name: "Gear", privacy: .private, owner: anna, at: 2)
            let bike = try await store.createItem(bucket: gear.id, name: "Bike", note: nil, photo: nil, at: 3)
            let digest = [UInt8](repeating: 7, count: 32)
            let tracker = try await store.pairTracker(item: bike.id, device: "dev-1", keyDigest: digest, at: 4)
            let fresh = try #require(try await store.trackerIngestState(keyDigest: digest, now: 0))
            #expect(fresh == TrackerIngestState(record: tracker, keyDigest: digest, latest: nil, speedRejections: 0))
            #expect(try await store.trackerIngestState(keyDigest: [UInt8](repeating: 8, count: 32), now: 0) == nil)
            // An inactive tracker's report writes nothing: the active check is part of the write.
            await #expect(throws: TrackerStoreError.notActive) {
                try await store.recordTrackerIngest(
                    tracker: tracker.id, fix: Fix(lat: 1, lon: 1, ts: 9), speedRejections: 1)
            }
            #expect(try await store.trackerFix(tracker: tracker.id) == nil)
            let active = try #require(try await store.setTrackerActive(id: tracker.id, active: true))
            // Only the count: no fix to store.
            #expect(try await store.recordTrackerIngest(tracker: tracker.id, fix: nil, speedRejections: 2) == false)
            let fix = Fix(lat: 1, lon: 2, acc: 5, alt: 30, spd: 1.5, hdg: 90, bat: 80, ts: 100)
            #expect(try await store.recordTrackerIngest(tracker: tracker.id, fix: fix, speedRejections: 3))
            // An older fix is not stored; the count is.
            #expect(
                try await store.recordTrackerIngest(
                    tracker: tracker.id, fix: Fix(lat: 9, lon: 9, ts: 50), speedRejections: 4)
                    == false)
            // A tracker that is gone stores nothing.
            await #expect(throws: TrackerStoreError.notActive) {
                try await store.recordTrackerIngest(tracker: 999, fix: fix, speedRejections: 1)
            }
            #expect(try await store.trackerFix(tracker: 999) == nil)
            database.close(store)

            store = try database.open()
            let read = try #require(try await store.trackerIngestState(keyDigest: digest, now: 0))
            #expect(read.latest == fix)
            #expect(read.speedRejections == 4)
            #expect(read.keyDigest == digest && read.record == active)
            #expect(try await store.unpairTracker(id: tracker.id))
            #expect(try await store.trackerIngestState(keyDigest: digest, now: 0) == nil)
        }
    }

    @Test(arguments: StoreEngine.available)
    func aKeyFindsItsTrackerAndAnItemSeesOnlyTheOtherItemsOfItsBucket(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            let anna = try await store.createUser(
                NewUser(username: "anna", name: "anna", passwordHash: nil, isGuest: false, createdAt: 1)
            ).id
            let gear = try await store.createBucket(name: "Gear", privacy: .private, owner: anna, at: 2)
            let other = try await store.createBucket(name: "Other", privacy: .private, owner: anna, at: 2)
            let bike = try await store.createItem(bucket: gear.id, name: "Bike", note: nil, photo: nil, at: 3)
            let bag = try await store.createItem(bucket: gear.id, name: "Bag", note: nil, photo: nil, at: 4)
            let keys = try await store.createItem(bucket: gear.id, name: "Keys", note: nil, photo: nil, at: 4)
            let car = try await store.createItem(bucket: other.id, name: "Car", note: nil, photo: nil, at: 5)
            let bikeTracker = try await store.pairTracker(item: bike.id, device: "bike", keyDigest: [1], at: 6)
            let bagTracker = try await store.pairTracker(item: bag.id, device: "bag", keyDigest: [2], at: 6)
            _ = try await store.pairTracker(item: keys.id, device: "keys", keyDigest: [3], at: 6)
            let carTracker = try await store.pairTracker(item: car.id, device: "car", keyDigest: [4], at: 6)
            #expect(try await store.tracker(keyDigest: [2]) == bagTracker)
            #expect(try await store.tracker(keyDigest: [9]) == nil)
            // Key digests are unique: a second tracker with the same one is refused.
            let map = try await store.createItem(bucket: gear.id, name: "Map", note: nil, photo: nil, at: 7)
            await #expect(throws: (any Error).self) {
                try await store.pairTracker(item: map.id, device: "dup", keyDigest: [1], at: 7)
            }
            #expect(try await store.item(id: map.id)?.tracker == nil)
            for (tracker, lat) in [(bikeTracker, 1.0), (bagTracker, 2.0), (carTracker, 3.0)] {
                #expect(try await store.recordTrackerFix(tracker: tracker.id, fix: Fix(lat: lat, lon: 0, ts: 10)))
            }
            // Bike sees Bag (Keys has no position, Car is in another bucket), never itself.
            #expect(
                try await store.bucketMates(of: bike.id)
                    == [BucketMate(item: bag.id, name: "Bag", fix: Fix(lat: 2, lon: 0, ts: 10))])
            #expect(try await store.bucketMates(of: car.id) == [])
            #expect(try await store.bucketMates(of: 999) == [])
            // A hidden item's position is for the bucket's owners only: no tracker is shown it.
            _ = try await store.updateItem(id: bag.id, changes: ItemChanges(hidden: true), by: anna)
            #expect(try await store.bucketMates(of: bike.id) == [])
            _ = try await store.updateItem(id: bag.id, changes: ItemChanges(hidden: false), by: anna)
            #expect(try await store.bucketMates(of: bike.id).map(\.item) == [bag.id])
        }
    }
}
