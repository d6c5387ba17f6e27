// An in-memory stand-in for the tracker part of the store, with the SQLite store's contracts (a device id is unique,
// an item has one tracker, the item must exist, a tracker whose pairer is no longer an owner of its bucket is refused)
// and a switch to make writes fail, so the tracker ops are tested without SQLite.
import CairnBuckets
public import CairnCore
import CairnSessions
public import CairnTrackers
public import Synchronization

public final class MemoryTrackerStore: TrackerStore {
    private let items: MemoryBucketStore
    /// Whose suspensions count (nil: nobody is suspended).
    private let accounts: MemoryAccountStore?

    /// Creates an empty one whose items are those of `items` and whose owners' suspensions are those of `accounts`.
    public init(items: MemoryBucketStore, accounts: MemoryAccountStore? = nil) {
        self.items = items
        self.accounts = accounts
    }

    public func trackerOwnersSuspended(item: Int64, now: Int64) async throws -> Bool {
        guard let accounts else { return false }
        let owners = items.state.withLock { s in s.items[item].flatMap { s.buckets[$0.bucket]?.owners } ?? [] }
        let suspensions = accounts.state.withLock { $0.suspensions }
        return owners.allSatisfy { suspensions[$0]?.holds(at: now) == true }
    }

    public struct State {
        public var trackers: [Int64: TrackerRecord] = [:]
        public var digests: [Int64: [UInt8]] = [:]
        public var next: Int64 = 1
        public var fixes: [Int64: Fix] = [:]
        public var speedRejections: [Int64: Int] = [:]
        public var failWrites = false
    }
    public let state = Mutex(State())

    public func pairTracker(
        item: Int64, device: String, keyDigest: [UInt8], by pairer: Int64?, at: Int64
    ) async throws -> TrackerRecord {
        guard try await items.item(id: item) != nil else { throw TrackerStoreError.itemNotFound }
        let record = try state.withLock { s in
            if s.failWrites { throw MemoryBucketStore.InjectedFailure() }
            if s.trackers.values.contains(where: { $0.device == device }) { throw TrackerStoreError.deviceTaken }
            if s.trackers.values.contains(where: { $0.item == item }) { throw TrackerStoreError.itemTaken }
            let record = TrackerRecord(
                id: s.next, device: device, item: item, active: false, created: at, pairedBy: pairer)
            s.next += 1
            s.trackers[record.id] = record
            s.digests[record.id] = keyDigest
            items.state.withLock { $0.items[item]?.tracker = record.id }
            return record
        }
        return viewed(record)
    }

    /// The record as the store reads it: whether its pairer is still an owner of its item's bucket, worked out now.
    private func viewed(_ record: TrackerRecord) -> TrackerRecord {
        var record = record
        if let pairer = record.pairedBy {
            record.pairerLeft = items.state.withLock { s in
                s.items[record.item].flatMap { s.buckets[$0.bucket]?.members[pairer] } != .owner
            }
        }
        return record
    }

    public func tracker(id: Int64) async throws -> TrackerRecord? { state.withLock { $0.trackers[id] }.map(viewed) }

    public func tracker(device: String) async throws -> (record: TrackerRecord, keyDigest: [UInt8])? {
        state.withLock { s in
            s.trackers.values.first { $0.device == device }.map { ($0, s.digests[$0.id] ?? []) }
        }.map { (viewed($0.0), $0.1) }
    }

    public func tracker(keyDigest: [UInt8]) async throws -> TrackerRecord? {
        state.withLock { s in s.trackers.values.first { s.digests[$0.id] == keyDigest } }.map(viewed)
    }

    public func trackers(bucket: Int64) async throws -> [TrackerRecord] {
        let items = self.items.state.withLock { $0.items }
        return state.withLock { s in s.trackers.values.filter { items[$0.item]?.bucket == bucket } }
            .sorted { $0.id < $1.id }.map(viewed)
    }

    public func bucketMates(ofTracker tracker: Int64) async throws -> [BucketMate] {
        guard let asking = try await self.tracker(id: tracker), asking.accepted, asking.showsItems else { return [] }
        let item = asking.item
        let items = self.items.state.withLock { $0.items }
        guard let bucket = items[item]?.bucket else { return [] }
        return state.withLock { s in
            s.trackers.values.compactMap { tracker -> BucketMate? in
                guard tracker.item != item, let mate = items[tracker.item], mate.bucket == bucket, !mate.hidden,
                    let fix = s.fixes[tracker.id]
                else { return nil }
                return BucketMate(item: mate.id, name: mate.name, fix: fix)
            }.sorted { $0.item < $1.item }
        }
    }

    public func setTrackerShowsItems(id: Int64, shows: Bool) async throws -> TrackerRecord? {
        try state.withLock { s in
            if s.failWrites { throw MemoryBucketStore.InjectedFailure() }
            s.trackers[id]?.showsItems = shows
            return s.trackers[id]
        }.map(viewed)
    }

    public func setTrackerActive(id: Int64, active: Bool) async throws -> TrackerRecord? {
        try state.withLock { s in
            if s.failWrites { throw MemoryBucketStore.InjectedFailure() }
            s.trackers[id]?.active = active
            return s.trackers[id]
        }.map(viewed)
    }

    public func unpairTracker(id: Int64) async throws -> Bool {
        try state.withLock { s in
            if s.failWrites { throw MemoryBucketStore.InjectedFailure() }
            s.digests[id] = nil
            s.fixes[id] = nil
            s.speedRejections[id] = nil
            guard let gone = s.trackers.removeValue(forKey: id) else { return false }
            items.state.withLock { $0.items[gone.item]?.tracker = nil }
            return true
        }
    }

    public func recordTrackerFix(tracker: Int64, fix: Fix) async throws -> Bool {
        try state.withLock { s in
            if s.failWrites { throw MemoryBucketStore.InjectedFailure() }
            guard s.trackers[tracker] != nil else { return false }
            if let stored = s.fixes[tracker], stored.ts > fix.ts { return false }
            s.fixes[tracker] = fix
            return true
        }
    }

    public func trackerFix(tracker: Int64) async throws -> Fix? { state.withLock { $0.fixes[tracker] } }

    public func trackerIngestState(keyDigest: [UInt8], now: Int64) async throws -> TrackerIngestState? {
        let found = state.withLock { s in
            s.trackers.values.first { s.digests[$0.id] == keyDigest }.map {
                TrackerIngestState(
                    record: viewed($0), keyDigest: s.digests[$0.id] ?? [], latest: s.fixes[$0.id],
                    speedRejections: s.speedRejections[$0.id] ?? 0)
            }
        }
        guard var found else { return nil }
        found.ownersSuspended = try await trackerOwnersSuspended(item: found.record.item, now: now)
        return found
    }

    public func recordTrackerIngest(tracker: Int64, fix: Fix?, speedRejections: Int) async throws -> Bool {
        let record = state.withLock { $0.trackers[tracker] }.map(viewed)
        return try state.withLock { s in
            if s.failWrites { throw MemoryBucketStore.InjectedFailure() }
            guard record?.accepted == true, s.trackers[tracker]?.active == true else {
                throw TrackerStoreError.notActive
            }
            s.speedRejections[tracker] = speedRejections
            guard let fix else { return false }
            if let stored = s.fixes[tracker], stored.ts > fix.ts { return false }
            s.fixes[tracker] = fix
            return true
        }
    }
}
