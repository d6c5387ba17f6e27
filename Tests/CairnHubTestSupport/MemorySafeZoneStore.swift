// An in-memory stand-in for the safe zone part of the store, with the SQLite store's contracts (the per-user count
// checked with the insert; a zone removed only by its owner) and a switch to make writes fail.
public import CairnTrackers
public import Synchronization

public final class MemorySafeZoneStore: SafeZoneStore {
    /// Creates an empty one.
    public init() {}

    public struct State {
        public var zones: [Int64: SafeZone] = [:]
        public var next: Int64 = 1
        public var failWrites = false
    }
    public let state = Mutex(State())

    public func addSafeZone(
        owner: Int64, name: String, lat: Double, lon: Double, radius: Double, limit: Int
    ) async throws -> SafeZone {
        try state.withLock { s in
            if s.failWrites { throw MemoryBucketStore.InjectedFailure() }
            guard s.zones.values.filter({ $0.owner == owner }).count < limit else {
                throw SafeZoneStoreError.tooMany(limit: limit)
            }
            let zone = SafeZone(id: s.next, owner: owner, name: name, lat: lat, lon: lon, radius: radius)
            s.next += 1
            s.zones[zone.id] = zone
            return zone
        }
    }

    public func removeSafeZone(id: Int64, owner: Int64) async throws -> Bool {
        try state.withLock { s in
            if s.failWrites { throw MemoryBucketStore.InjectedFailure() }
            guard s.zones[id]?.owner == owner else { return false }
            s.zones[id] = nil
            return true
        }
    }
}
