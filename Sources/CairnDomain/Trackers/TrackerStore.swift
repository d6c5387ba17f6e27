// Durable storage for trackers. A device id is unique across the hub and an item has at most one tracker; both are
// enforced by the store, so two pairings racing on two connections cannot both win. A tracker goes with its item.
// Only the digest of a tracker's key is stored.

/// Why a tracker store refused a write.
public enum TrackerStoreError: Error, Equatable {
    /// Another tracker already has this device id.
    case deviceTaken
    /// The item already has a tracker.
    case itemTaken
    /// The item is gone.
    case itemNotFound
}

/// Durable storage for trackers.
public protocol TrackerStore: Sendable {
    /// Binds `device` to `item`, inactive, storing the digest of its key.
    func pairTracker(item: Int64, device: String, keyDigest: [UInt8], at: Int64) async throws -> TrackerRecord
    /// One tracker.
    func tracker(id: Int64) async throws -> TrackerRecord?
    /// The tracker of a device and the digest of its key, for authenticating its reports.
    func tracker(device: String) async throws -> (record: TrackerRecord, keyDigest: [UInt8])?
    /// Turns a tracker's reports on or off; nil when it is gone.
    func setTrackerActive(id: Int64, active: Bool) async throws -> TrackerRecord?
    /// Deletes a tracker (and its position); false when it was already gone.
    func unpairTracker(id: Int64) async throws -> Bool
    /// Stores `fix` as the tracker's latest position unless a newer one is stored; true when it became the latest.
    func recordTrackerFix(tracker: Int64, fix: Fix) async throws -> Bool
    /// The tracker's latest position.
    func trackerFix(tracker: Int64) async throws -> Fix?
}
