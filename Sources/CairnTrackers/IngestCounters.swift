// What became of trackers' reports and fixes since the hub started, for /metrics: fixes stored, superseded within
// their batch, older than the stored latest, dropped by each filter; speed re-anchors; reports refused. The ingest
// runs in the HTTP service's tasks, several at once and off the loop, so the counts sit behind a lock; the exporter
// reads a copy on the loop when /metrics is scraped.
import CairnCore
import Synchronization

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
