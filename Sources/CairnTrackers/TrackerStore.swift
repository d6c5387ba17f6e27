// Durable storage for trackers. A device id is unique across the hub and an item has at most one tracker; both are
// enforced by the store, so two pairings racing on two connections cannot both win. A tracker goes with its item.
// Only the digest of a tracker's key is stored. Who paired a tracker is stored with it, and every read of a tracker
// says whether that user is still an owner of its item's bucket (`TrackerRecord.pairerLeft`): the check is made in the
// store, in the same read or write as the rest, so it holds on every node sharing the store the moment an unshare or
// a role change commits.
public import CairnCore

/// Why a tracker store refused a write.
public enum TrackerStoreError: Error, Equatable {
    /// Another tracker already has this device id.
    case deviceTaken
    /// The item already has a tracker.
    case itemTaken
    /// The item is gone.
    case itemNotFound
    /// The tracker is gone or no longer active (deactivated or unpaired while its report was judged).
    case notActive
}

/// Durable storage for trackers.
public protocol TrackerStore: Sendable {
    /// Binds `device` to `item`, inactive, storing the digest of its key and who paired it (nil: nobody recorded).
    func pairTracker(
        item: Int64, device: String, keyDigest: [UInt8], by pairer: Int64?, at: Int64
    ) async throws -> TrackerRecord
    /// One tracker.
    func tracker(id: Int64) async throws -> TrackerRecord?
    /// The tracker of a device and the digest of its key, for authenticating its reports.
    func tracker(device: String) async throws -> (record: TrackerRecord, keyDigest: [UInt8])?
    /// The tracker whose key has this digest (keys are random, so at most one; the store keeps them unique).
    func tracker(keyDigest: [UInt8]) async throws -> TrackerRecord?
    /// What the device of `tracker` is shown (the OwnTracks answer; `TrackerLookup`): the items of its item's bucket
    /// other than its own whose tracker has a position and that are not hidden, with their names, by item id — never
    /// an item of another bucket; and nothing at all unless, at the time of this read, the tracker is active, shown
    /// items (`showsItems`) and its pairer is still an owner of the bucket.
    func bucketMates(ofTracker tracker: Int64) async throws -> [BucketMate]
    /// Every tracker on the items of `bucket`, by id (what its owners list with `tracker.list`).
    func trackers(bucket: Int64) async throws -> [TrackerRecord]
    /// Turns on or off whether a tracker's device is shown the other items of its bucket; nil when it is gone.
    func setTrackerShowsItems(id: Int64, shows: Bool) async throws -> TrackerRecord?
    /// Turns a tracker's reports on or off; nil when it is gone.
    func setTrackerActive(id: Int64, active: Bool) async throws -> TrackerRecord?
    /// Deletes a tracker (and its position); false when it was already gone.
    func unpairTracker(id: Int64) async throws -> Bool
    /// Stores `fix` as the tracker's latest position unless a newer one is stored; true when it became the latest.
    func recordTrackerFix(tracker: Int64, fix: Fix) async throws -> Bool
    /// The tracker's latest position.
    func trackerFix(tracker: Int64) async throws -> Fix?
    /// What the ingest reads of a tracker before judging its report, in one read, found by its key's digest (so a
    /// wrong key costs the same look-up whether or not the device named exists); `now` decides which suspensions hold
    /// (`TrackerIngestState.ownersSuspended`).
    func trackerIngestState(keyDigest: [UInt8], now: Int64) async throws -> TrackerIngestState?
    /// True when every owner of `item`'s bucket is suspended at `now` (the tracker's reports are then refused).
    func trackerOwnersSuspended(item: Int64, now: Int64) async throws -> Bool
    /// Commits what a report did to its tracker in one transaction: the count of consecutive speed rejections, and
    /// `fix` as the latest position unless a newer one is stored. True when `fix` became the latest. Throws
    /// `TrackerStoreError.notActive`, writing nothing, when the tracker is gone or inactive, or its pairer is no
    /// longer an owner of its item's bucket, at the time of the write, so a report judged before `tracker.deactivate`
    /// or an unshare committed cannot land after it.
    func recordTrackerIngest(tracker: Int64, fix: Fix?, speedRejections: Int) async throws -> Bool
}

extension TrackerStore {
    /// Binds `device` to `item` with no pairer recorded, as trackers paired before `paired_by` existed were (tests and
    /// tools; the `tracker.pair` op always names its caller).
    public func pairTracker(item: Int64, device: String, keyDigest: [UInt8], at: Int64) async throws -> TrackerRecord {
        try await pairTracker(item: item, device: device, keyDigest: keyDigest, by: nil, at: at)
    }
}

/// A tracker as the ingest reads it: who it is, its key's digest, its latest fix and its filters' state.
public struct TrackerIngestState: Sendable, Equatable {
    /// The tracker.
    public var record: TrackerRecord
    /// The SHA-256 of its key.
    public var keyDigest: [UInt8]
    /// Its latest position.
    public var latest: Fix?
    /// Fixes dropped by the speed filter since the last accepted one.
    public var speedRejections: Int
    /// True when every owner of the item's bucket is suspended: the report is refused (`IngestRefusal.suspended`).
    public var ownersSuspended: Bool

    /// Creates the value.
    public init(
        record: TrackerRecord, keyDigest: [UInt8], latest: Fix?, speedRejections: Int, ownersSuspended: Bool = false
    ) {
        self.ownersSuspended = ownersSuspended
        self.record = record
        self.keyDigest = keyDigest
        self.latest = latest
        self.speedRejections = speedRejections
    }
}
