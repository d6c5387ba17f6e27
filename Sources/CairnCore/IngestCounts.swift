// What became of trackers' reports and fixes since the hub started, for /metrics: fixes stored, superseded within
// their batch, older than the stored latest, dropped by each filter; speed re-anchors; reports refused. A part of
// every `StatsSnapshot`; the trackers' ingest counts them (`IngestCounters`).

/// The ingest's counters at one instant.
public struct IngestCounts: Sendable, Equatable {
    /// Fixes that became their tracker's latest.
    public var stored: UInt64 = 0
    /// Fixes accepted by the filters but not stored, because a newer fix of the same report was.
    public var superseded: UInt64 = 0
    /// Fixes older than the tracker's latest (never stored).
    public var older: UInt64 = 0
    /// Fixes dropped, by filter.
    public var dropped: [IngestDrop: UInt64] = [:]
    /// Fixes the speed filter accepted as a new anchor, by cause.
    public var reanchors: [SpeedReanchor: UInt64] = [:]
    /// Reports refused, by the refusal's label (`IngestRefusal.label`).
    public var refused: [String: UInt64] = [:]

    /// All zero.
    public init() {}
}
