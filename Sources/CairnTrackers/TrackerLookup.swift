// The reads the ingest endpoints make besides the report itself (which `TrackerIngest` authenticates and commits):
// Overland names a tracker by its key alone, so the tracker is found by the key's digest; OwnTracks messages that
// carry no position are still authenticated; and an OwnTracks device is answered with where the other items of its
// item's bucket are. Like `TrackerIngest` it runs off the loop, in the HTTP service's task: every call is a store read.
//
// Privacy: `bucketMates` returns only items of the same bucket as the tracker's own item, never users and never
// anything of another bucket — a tracker is a thing in that bucket, and whoever holds its key sees what the bucket's
// viewers see of its items, no more; a hidden item (its position for the bucket's owners only) is left out too. The
// store's `bucketMates` query is the one place that decides it, and it shows nothing once the tracker is deactivated,
// no longer shown items, or its pairer is no longer an owner of the bucket (read at the time of the answer, not of the
// report). A tracker whose pairer left is refused here as an inactive one is (`TrackerRecord.accepted`).
public import CairnCore
import Logging

/// An item's name and latest tracker fix: what an OwnTracks device is shown of the other items of its bucket.
public struct BucketMate: Sendable, Equatable {
    /// The item.
    public var item: Int64
    /// Its name.
    public var name: String
    /// Its tracker's latest fix.
    public var fix: Fix

    /// Creates the value.
    public init(item: Int64, name: String, fix: Fix) {
        self.item = item
        self.name = name
        self.fix = fix
    }
}

/// Finds trackers by their key and the positions their devices are shown. Safe from any thread.
public final class TrackerLookup: Sendable {
    private let store: any TrackerStore
    private let clock: any Clock
    /// The ingest's counters: a refusal here is counted in `cairn_ingest_refused_total` like one of the ingest's.
    private let counters: IngestCounters

    package init(store: any TrackerStore, clock: any Clock, ingest: TrackerIngest) {
        self.store = store
        self.clock = clock
        self.counters = ingest.counters
    }

    /// The active tracker whose key is `key`: 401 when there is none, 403 when it is inactive or its pairer is no
    /// longer an owner of its bucket, 503 when the store failed.
    public func tracker(key: String) async throws(IngestRefusal) -> TrackerRecord {
        do { return try await find(key: key) } catch {
            counters.refused(error)
            throw error
        }
    }

    private func find(key: String) async throws(IngestRefusal) -> TrackerRecord {
        guard let digest = Trackers.keyDigest(key) else { throw .badCredentials }
        let found: TrackerRecord?
        do { found = try await store.tracker(keyDigest: digest) } catch {
            hubLogger.error("storage failure: \(error)")
            throw .unavailable
        }
        guard let found else { throw .badCredentials }
        guard found.accepted else { throw .inactive }
        return found
    }

    /// The active tracker of `device` if `key` is its key (a message with nothing to store still proves who sent it);
    /// 403 `suspended` when every owner of its bucket is suspended, as a report would be.
    public func tracker(device: String, key: String) async throws(IngestRefusal) -> TrackerRecord {
        let found = try await tracker(key: key)
        guard found.device == device else {
            counters.refused(.badCredentials)
            throw .badCredentials
        }
        let suspended: Bool
        do { suspended = try await store.trackerOwnersSuspended(item: found.item, now: clock.now()) } catch {
            hubLogger.error("storage failure: \(error)")
            counters.refused(.unavailable)
            throw .unavailable
        }
        if suspended {
            counters.refused(.suspended)
            throw .suspended
        }
        return found
    }

    /// The other items of `tracker`'s item's bucket that have a tracker position and are not hidden, by item id (its
    /// own item left out); none unless the tracker is still active, shown items, and paired by an owner of the bucket.
    public func bucketMates(of tracker: TrackerRecord) async throws(IngestRefusal) -> [BucketMate] {
        do { return try await store.bucketMates(ofTracker: tracker.id) } catch {
            hubLogger.error("storage failure: \(error)")
            throw .unavailable
        }
    }
}
