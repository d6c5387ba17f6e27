// The tracker table of migration v11, on both engines: a device id unique across the hub, one tracker per item, only
// the key's digest stored, activation and unpairing, and a tracker going with its item (and its bucket). Read back
// from a reopened store, as after a restart. Who paired a tracker (v22 / p2), checked against the bucket's owners on
// every read and write of the tracker, and what an older database's trackers become.
import CairnBuckets
import CairnCore
import CairnSessions
import CairnTestSupport
import CairnTrackers
import Foundation
import GRDB
import Testing

@testable import CairnPostgres
@testable import CairnStore

@Suite(.timeLimit(.minutes(5)))
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
            // Only an active tracker an owner let see the bucket is shown anything.
            #expect(try await store.bucketMates(ofTracker: bikeTracker.id) == [])
            _ = try await store.setTrackerActive(id: bikeTracker.id, active: true)
            #expect(try await store.bucketMates(ofTracker: bikeTracker.id) == [])
            for tracker in [bikeTracker, carTracker] {
                _ = try await store.setTrackerActive(id: tracker.id, active: true)
                _ = try await store.setTrackerShowsItems(id: tracker.id, shows: true)
            }
            // Bike sees Bag (Keys has no position, Car is in another bucket), never itself.
            #expect(
                try await store.bucketMates(ofTracker: bikeTracker.id)
                    == [BucketMate(item: bag.id, name: "Bag", fix: Fix(lat: 2, lon: 0, ts: 10))])
            #expect(try await store.bucketMates(ofTracker: carTracker.id) == [])
            #expect(try await store.bucketMates(ofTracker: 999) == [])
            // A hidden item's position is for the bucket's owners only: no tracker is shown it.
            _ = try await store.updateItem(id: bag.id, changes: ItemChanges(hidden: true), by: anna)
            #expect(try await store.bucketMates(ofTracker: bikeTracker.id) == [])
            _ = try await store.updateItem(id: bag.id, changes: ItemChanges(hidden: false), by: anna)
            #expect(try await store.bucketMates(ofTracker: bikeTracker.id).map(\.item) == [bag.id])
            // Deactivated, it is shown nothing again.
            _ = try await store.setTrackerActive(id: bikeTracker.id, active: false)
            #expect(try await store.bucketMates(ofTracker: bikeTracker.id) == [])
        }
    }

    /// Migration v22 / p2: who paired a tracker. It is accepted (read, written, shown its bucket) only while that user
    /// is an owner of its item's bucket; made a viewer, unshared or deleted, their tracker is refused, whoever else
    /// owns the bucket; made an owner again, it is accepted again. A tracker whose pairer is not recorded is judged by
    /// `active` alone. Owners list every tracker of a bucket with its pairer.
    @Test(arguments: StoreEngine.available)
    func aTrackerIsAcceptedOnlyWhileWhoeverPairedItOwnsItsBucket(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            var users: [Int64] = []
            for name in ["anna", "bob"] {
                users.append(
                    try await store.createUser(
                        NewUser(username: name, name: name, passwordHash: nil, isGuest: false, createdAt: 1)
                    ).id)
            }
            let (anna, bob) = (users[0], users[1])
            let gear = try await store.createBucket(name: "Gear", privacy: .private, owner: anna, at: 2)
            _ = try await store.setMember(bucket: gear.id, user: bob, role: .owner)
            let bike = try await store.createItem(bucket: gear.id, name: "Bike", note: nil, photo: nil, at: 3)
            let keys = try await store.createItem(bucket: gear.id, name: "Keys", note: nil, photo: nil, at: 3)
            let bag = try await store.createItem(bucket: gear.id, name: "Bag", note: nil, photo: nil, at: 3)
            let bobs = try await store.pairTracker(item: bike.id, device: "bob-phone", keyDigest: [1], by: bob, at: 4)
            let annas = try await store.pairTracker(item: keys.id, device: "keys", keyDigest: [2], by: anna, at: 4)
            let legacy = try await store.pairTracker(item: bag.id, device: "bag", keyDigest: [3], at: 4)
            #expect(bobs.pairedBy == bob && !bobs.pairerLeft && legacy.pairedBy == nil)
            for tracker in [bobs, annas, legacy] {
                _ = try await store.setTrackerActive(id: tracker.id, active: true)
                _ = try await store.setTrackerShowsItems(id: tracker.id, shows: true)
            }
            #expect(try await store.recordTrackerFix(tracker: annas.id, fix: Fix(lat: 2, lon: 2, ts: 10)))
            #expect(try await store.bucketMates(ofTracker: bobs.id).map(\.item) == [keys.id])
            #expect(
                try await store.recordTrackerIngest(
                    tracker: bobs.id, fix: Fix(lat: 1, lon: 1, ts: 20), speedRejections: 0))

            /// What the store says of Bob's tracker everywhere it reads or writes it.
            func bobsTracker(left: Bool, ts: Int64) async throws {
                #expect(try await store.tracker(id: bobs.id)?.pairerLeft == left)
                #expect(try await store.tracker(keyDigest: [1])?.pairerLeft == left)
                #expect(try await store.tracker(device: "bob-phone")?.record.pairerLeft == left)
                #expect(try await store.trackerIngestState(keyDigest: [1], now: 0)?.record.pairerLeft == left)
                #expect(try await store.bucketMates(ofTracker: bobs.id).map(\.item) == (left ? [] : [keys.id]))
                let fix = Fix(lat: 1, lon: 1, ts: ts)
                if left {
                    await #expect(throws: TrackerStoreError.notActive) {
                        try await store.recordTrackerIngest(tracker: bobs.id, fix: fix, speedRejections: 0)
                    }
                    #expect(try await store.trackerFix(tracker: bobs.id)?.ts != ts)
                } else {
                    #expect(try await store.recordTrackerIngest(tracker: bobs.id, fix: fix, speedRejections: 0))
                }
                // Anna's tracker and the unrecorded one are untouched.
                #expect(try await store.tracker(id: annas.id)?.pairerLeft == false)
                #expect(try await store.bucketMates(ofTracker: legacy.id).map(\.item) == [bike.id, keys.id])
            }
            try await bobsTracker(left: false, ts: 30)
            _ = try await store.setMember(bucket: gear.id, user: bob, role: .viewer)
            try await bobsTracker(left: true, ts: 40)
            // Owners see every tracker of the bucket with who paired it.
            let listed = try await store.trackers(bucket: gear.id)
            #expect(listed.map(\.id) == [bobs.id, annas.id, legacy.id])
            #expect(listed.map(\.pairedBy) == [bob, anna, nil])
            #expect(listed.map(\.pairerLeft) == [true, false, false])
            #expect(try await store.trackers(bucket: 999) == [])
            _ = try await store.setMember(bucket: gear.id, user: bob, role: .owner)
            try await bobsTracker(left: false, ts: 50)
            _ = try await store.removeMember(bucket: gear.id, user: bob)
            try await bobsTracker(left: true, ts: 60)
            _ = try await store.setMember(bucket: gear.id, user: bob, role: .owner)
            try await store.execute("DELETE FROM users WHERE id = ?", [bob])
            try await bobsTracker(left: true, ts: 70)
            // The paired tracker and its changes read back the same way.
            let annasAgain = try #require(try await store.setTrackerActive(id: annas.id, active: true))
            #expect(annasAgain.pairedBy == anna && !annasAgain.pairerLeft)
            #expect(try await store.setTrackerShowsItems(id: bobs.id, shows: false)?.pairerLeft == true)
        }
    }

    /// Migration v22 / p2 on a database from before it: existing trackers get no pairer (NULL) and keep working.
    @Test(arguments: StoreEngine.available)
    func trackersPairedBeforeTheMigrationHaveNoPairerAndKeepWorking(engine: StoreEngine) async throws {
        let legacyRows = [
            "INSERT INTO users (id, username, name, is_guest, created_at) VALUES (1, 'anna', 'anna', false, 1)",
            "INSERT INTO buckets (id, name, privacy, created_at) VALUES (1, 'Gear', 'private', 2)",
            "INSERT INTO bucket_members (bucket_id, user_id, role) VALUES (1, 1, 'owner')",
            "INSERT INTO items (id, bucket_id, name, done, created_at) VALUES (1, 1, 'Bike', false, 3)",
            "INSERT INTO items (id, bucket_id, name, done, created_at) VALUES (2, 1, 'Keys', false, 3)",
            "INSERT INTO trackers (id, device, item_id, key_hash, active, created_at, shows_items) "
                + "VALUES (1, 'old', 1, X'01', true, 4, true)",
            "INSERT INTO trackers (id, device, item_id, key_hash, active, created_at) "
                + "VALUES (2, 'keys', 2, X'02', true, 4)",
            "INSERT INTO tracker_positions (tracker_id, lat, lon, ts) VALUES (2, 5, 5, 10)",
        ]
        // PostgreSQL writes a BYTEA literal as '\x01', not X'01'.
        let rows = legacyRows.map { engine == .postgres ? $0.replacingOccurrences(of: "X'0", with: "'\\x0") : $0 }
        try await engine.withLegacyStore(sqliteUpTo: "v21-picture-posts", postgresMigrations: 1, rows: rows) { store in
            let old = try #require(try await store.tracker(id: 1))
            #expect(old.pairedBy == nil && !old.pairerLeft && old.accepted)
            #expect(try await store.trackerIngestState(keyDigest: [1], now: 0)?.record.accepted == true)
            #expect(try await store.bucketMates(ofTracker: 1).map(\.item) == [2])
            #expect(
                try await store.recordTrackerIngest(tracker: 1, fix: Fix(lat: 1, lon: 1, ts: 20), speedRejections: 0))
            #expect(try await store.trackers(bucket: 1).map(\.pairedBy) == [nil, nil])
        }
    }
}
