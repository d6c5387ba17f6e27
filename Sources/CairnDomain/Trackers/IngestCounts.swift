// What became of trackers' reports and fixes since the hub started, for /metrics: fixes stored, superseded within
// their batch, older than the stored latest, dropped by each filter; speed re-anchors; reports refused. The ingest
// runs in the HTTP service's tasks, several at once and off the loop, so the counts sit behind a lock; the exporter
// reads a copy on the loop when /metrics is scraped.
import Synchronization

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

/// The live counters; safe from any thread.
final class IngestCounters: Sendable {
    private let counts = Mutex(IngestCounts())

    /// A copy of the counters now.
    var current: IngestCounts { counts.withLock { $0 } }

    /// Counts one refusal.
    func refused(_ refusal: IngestRefusal) { counts.withLock { $0.refused[refusal.label, default: 0] &+= 1 } }

    /// Adds what one report did.
    func add(_ report: IngestCounts) {
        counts.withLock { c in
            c.stored &+= report.stored
            c.superseded &+= report.superseded
            c.older &+= report.older
            for (k, v) in report.dropped { c.dropped[k, default: 0] &+= v }
            for (k, v) in report.reanchors { c.reanchors[k, default: 0] &+= v }
            for (k, v) in report.refused { c.refused[k, default: 0] &+= v }
        }
    }
}
