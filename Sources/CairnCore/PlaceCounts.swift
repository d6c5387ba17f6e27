// What the places feature has done since start, for /metrics: places by category now, nearest queries and the
// time spent answering them (validation and search, not the encoding), searches, operators' writes, and reloads
// from the store (`places.reload` or SIGHUP, e.g. after `cairn places import`, which runs in another process and
// is seen by the hub only through the reload that follows it).

/// The places feature's counters at one instant.
public struct PlaceCounts: Sendable, Equatable {
    /// Places in memory, by category.
    public var byCategory: [String: Int] = [:]
    /// `places.nearest` queries answered.
    public var nearest: UInt64 = 0
    /// Time spent answering them, nanoseconds.
    public var nearestNanoseconds: UInt64 = 0
    /// `places.search` queries answered.
    public var searches: UInt64 = 0
    /// Places written by operators over WebSocket (`place.upsert`).
    public var upserts: UInt64 = 0
    /// Places removed by operators over WebSocket (`place.remove`).
    public var removals: UInt64 = 0
    /// Reloads from the store that succeeded.
    public var reloads: UInt64 = 0
    /// Reloads from the store that failed (the places in memory stay as they were).
    public var reloadFailures: UInt64 = 0
    /// Places read by the last load from the store (at start or by a reload).
    public var loaded: UInt64 = 0

    /// All zero.
    public init() {}
}
