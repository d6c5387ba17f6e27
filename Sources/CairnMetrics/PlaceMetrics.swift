// The places feature's metrics: a gauge of places per category (made when a category is first seen, set to 0 when
// its last place goes, so a series never vanishes while the process lives), counters of queries, operators'
// writes and reloads, and the histogram of places.nearest latency, fed one sample per query by the hub.
import CairnCore
import CoreMetrics

/// The exporter's places metrics and the counts at the previous scrape. Event-loop thread only.
final class PlaceMetrics {
    let nearest: CoreMetrics.Counter
    let nearestSeconds: CoreMetrics.Timer
    let searches: CoreMetrics.Counter
    let upserts: CoreMetrics.Counter
    let removals: CoreMetrics.Counter
    let reloads: CoreMetrics.Counter
    let reloadFailures: CoreMetrics.Counter
    let loaded: Meter
    /// Makes the gauge of one category.
    private let makeCategoryGauge: (String) -> Meter
    private var byCategory: [String: Meter] = [:]
    private var last = PlaceCounts()

    init(
        nearest: CoreMetrics.Counter, nearestSeconds: CoreMetrics.Timer, searches: CoreMetrics.Counter,
        upserts: CoreMetrics.Counter, removals: CoreMetrics.Counter, reloads: CoreMetrics.Counter,
        reloadFailures: CoreMetrics.Counter, loaded: Meter, byCategory: @escaping (String) -> Meter
    ) {
        self.nearest = nearest
        self.nearestSeconds = nearestSeconds
        self.searches = searches
        self.upserts = upserts
        self.removals = removals
        self.reloads = reloads
        self.reloadFailures = reloadFailures
        self.loaded = loaded
        self.makeCategoryGauge = byCategory
    }

    /// Brings the metrics up to `now`.
    func update(_ now: PlaceCounts) {
        func grow(_ counter: CoreMetrics.Counter, _ before: UInt64, _ after: UInt64) {
            if after > before { counter.increment(by: Int64(clamping: after - before)) }
        }
        grow(nearest, last.nearest, now.nearest)
        grow(searches, last.searches, now.searches)
        grow(upserts, last.upserts, now.upserts)
        grow(removals, last.removals, now.removals)
        grow(reloads, last.reloads, now.reloads)
        grow(reloadFailures, last.reloadFailures, now.reloadFailures)
        loaded.set(Int64(clamping: now.loaded))
        for (category, gauge) in byCategory where now.byCategory[category] == nil { gauge.set(0) }
        for (category, count) in now.byCategory {
            if byCategory[category] == nil { byCategory[category] = makeCategoryGauge(category) }
            byCategory[category]!.set(count)
        }
        last = now
    }
}
