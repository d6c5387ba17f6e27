// What relics need from durable storage. A relic is committed before `relic.create` replies and deleted before
// `relic.delete` replies, so an acknowledged change survives kill -9. Live relics are loaded once at start; content
// is read on demand when someone may open one. Expired relics stay stored (their creator still lists them) until
// the retention period passes and `purgeExpiredRelics` removes them.
public import CairnCore

/// Why the store refused a relic write.
public enum RelicStoreError: Error, Equatable, Sendable {
    /// The media id names no upload of the creator.
    case mediaNotFound
}

/// Durable storage for relics.
public protocol RelicStore: Sendable {
    /// Markers of every relic not expired at `now`; called once at start.
    func loadLiveRelics(now: Int64) throws -> [RelicMarker]
    /// The same, read while serving (several nodes: a node that may have missed others' relics reads them again).
    func liveRelics(now: Int64) async throws -> [RelicMarker]
    /// Stores a relic and returns its id. Throws `RelicStoreError.mediaNotFound` when `relic.mediaID` is not an
    /// upload of `relic.creatorID`.
    func createRelic(_ relic: NewRelic) async throws -> Int64
    /// One relic with its content, expired or not; nil when it does not exist (or was purged).
    func relic(id: Int64) async throws -> RelicRecord?
    /// The creator's relics, newest first, with ids below `before` when given, at most `limit`.
    func relics(creator: Int64, before: Int64?, limit: Int) async throws -> [RelicRecord]
    /// Deletes a relic; false when it did not exist.
    func deleteRelic(id: Int64) async throws -> Bool
    /// Deletes relics that expired before `cutoff`; returns how many.
    func purgeExpiredRelics(expiredBefore cutoff: Int64) async throws -> Int
}
