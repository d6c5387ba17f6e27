// `GET /metrics`: the hub's figures in the Prometheus text format. The figures themselves are plain counters the
// loop keeps (`Telemetry`) and a `StatsSnapshot` read at scrape time; this exporter is the only code that knows a
// metrics library. It talks to swift-metrics types (`Counter`, `Meter`, `Timer`), each backed by a handler
// registered in its own swift-prometheus `PrometheusCollectorRegistry` with a HELP text, so several hubs in one
// process (the tests) never share a global registry and `MetricsSystem.bootstrap` is never called.
//
// Counters: the snapshot holds running totals; each scrape adds what grew since the previous one. Histograms
// need every sample for exact buckets and sum, so the exporter is also the `TelemetrySink` the transport reports
// each fan-out latency and loop-lag sample to (one locked bucket walk per sample, on the loop).
public import CairnCore
import CairnTrackers
import CoreMetrics
import Prometheus

/// Renders the hub's figures as Prometheus text; receives latency samples as a `TelemetrySink`.
public final class PrometheusExporter: TelemetrySink, @unchecked Sendable {
    // `@unchecked Sendable`: the swift-metrics handles are thread-safe; `last` and the lazily made relic gauge are
    // touched only on the event-loop thread (render is called there).

    /// Upper bounds of the fan-out latency buckets.
    public static let fanoutBuckets: [Duration] = [
        .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1),
        .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500),
    ]
    /// Upper bounds of the places.nearest latency buckets (validation and search, in the hub).
    public static let placesNearestBuckets: [Duration] = [
        .microseconds(1), .microseconds(2), .microseconds(5), .microseconds(10), .microseconds(20),
        .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1),
        .milliseconds(5),
    ]
    /// Upper bounds of the event-loop lag buckets.
    public static let loopLagBuckets: [Duration] = [
        .microseconds(100), .microseconds(500), .milliseconds(1), .milliseconds(5), .milliseconds(10),
        .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .seconds(5),
    ]

    private let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory

    private let connections: [(state: String, meter: Meter)]
    private let connectionsOpened: CoreMetrics.Counter
    private let messagesReceived: CoreMetrics.Counter
    private let messagesSent: CoreMetrics.Counter
    private let bytesReceived: CoreMetrics.Counter
    private let bytesSent: CoreMetrics.Counter
    private let positionsReceived: CoreMetrics.Counter
    private let deliveries: CoreMetrics.Counter
    private let positionsLive: Meter
    private var relicsLive: Meter?
    /// The cluster link's metrics, made at the first reading that has one (a single node shows none).
    private var clusterRedisUp: Meter?
    private var clusterReconnects: CoreMetrics.Counter?
    private var lastReconnects: UInt64 = 0
    /// Cross-node message counters (published, received, dropped) and what each last read.
    private var clusterMessages: [(counter: CoreMetrics.Counter, last: UInt64)] = []
    private let pendingCoalesced: Meter
    private let pendingBytes: Meter
    private let storeInFlight: Meter
    private let snapshotPendingRows: Meter
    private let snapshotDuration: Meter
    private let snapshotRows: Meter
    private let snapshotAge: Meter
    private let residentMemory: Meter
    private let uptime: Meter
    private let fanoutLatency: CoreMetrics.Timer
    private let loopLag: CoreMetrics.Timer
    private let ingestFixes: [(result: String, counter: CoreMetrics.Counter)]
    private let ingestFiltered: [(reason: IngestDrop, counter: CoreMetrics.Counter)]
    private let ingestReanchors: [(cause: SpeedReanchor, counter: CoreMetrics.Counter)]
    private let ingestRefused: [(reason: String, counter: CoreMetrics.Counter)]
    private let places: PlaceMetrics

    /// The totals at the previous scrape.
    private var last = Totals()
    /// The ingest's counts at the previous scrape.
    private var lastIngest = IngestCounts()

    private struct Totals {
        var opened: UInt64 = 0, messagesIn: UInt64 = 0, messagesOut: UInt64 = 0, bytesIn: UInt64 = 0
        var bytesOut: UInt64 = 0, positions: UInt64 = 0, deliveries: UInt64 = 0
    }

    /// Creates an exporter with its own registry.
    public init() {
        factory = PrometheusMetricsFactory(registry: registry)
        let registry = self.registry
        let factory = self.factory
        func counter(_ name: String, _ help: String, labels: [(String, String)] = []) -> CoreMetrics.Counter {
            CoreMetrics.Counter(
                label: name, dimensions: labels,
                handler: registry.makeCounter(descriptor: Self.descriptor(name, help), labels: labels),
                factory: factory)
        }
        func gauge(_ name: String, _ help: String, labels: [(String, String)] = []) -> Meter {
            Meter(
                label: name, dimensions: labels,
                handler: registry.makeGauge(descriptor: Self.descriptor(name, help), labels: labels),
                factory: factory)
        }
        func histogram(_ name: String, _ buckets: [Duration], _ help: String) -> CoreMetrics.Timer {
            CoreMetrics.Timer(
                label: name, dimensions: [],
                handler: registry.makeDurationHistogram(
                    descriptor: Self.descriptor(name, help),
                    labels: [], buckets: buckets),
                factory: factory)
        }
        connections = ["open", "authenticated", "watching", "stats"].map { state in
            (
                state,
                gauge(
                    "cairn_connections",
                    "WebSocket connections by state (each state counts separately; "
                        + "open includes the others).", labels: [("state", state)])
            )
        }
        connectionsOpened = counter("cairn_connections_opened_total", "WebSocket connections accepted.")
        messagesReceived = counter("cairn_messages_received_total", "WebSocket messages received.")
        messagesSent = counter("cairn_messages_sent_total", "WebSocket messages written.")
        bytesReceived = counter("cairn_bytes_received_total", "Payload bytes of WebSocket messages received.")
        bytesSent = counter("cairn_bytes_sent_total", "Payload bytes of WebSocket messages written.")
        positionsReceived = counter("cairn_positions_received_total", "Positions accepted as a user's latest fix.")
        deliveries = counter("cairn_position_deliveries_total", "Positions written to watching friends.")
        positionsLive = gauge("cairn_positions_live", "Users with a live position in memory.")
        pendingCoalesced = gauge(
            "cairn_pending_coalesced_events",
            "Positions waiting in latest-wins slots (a newer one replaces an older).")
        pendingBytes = gauge("cairn_pending_outbound_bytes", "Bytes waiting to be written to clients.")
        storeInFlight = gauge("cairn_store_operations_in_flight", "Operations waiting on the store or the hasher.")
        snapshotPendingRows = gauge("cairn_snapshot_pending_rows", "Position rows waiting for the next snapshot.")
        snapshotDuration = gauge("cairn_snapshot_duration_seconds", "Duration of the last position snapshot.")
        snapshotRows = gauge("cairn_snapshot_rows", "Rows written by the last position snapshot.")
        snapshotAge = gauge("cairn_snapshot_age_seconds", "Time since the last position snapshot started.")
        residentMemory = gauge("cairn_resident_memory_bytes", "Resident memory of the process.")
        uptime = gauge("cairn_uptime_seconds", "Time since the hub started.")
        fanoutLatency = histogram(
            "cairn_fanout_latency_seconds", Self.fanoutBuckets,
            "From receipt of a position to its write to one watcher.")
        loopLag = histogram(
            "cairn_event_loop_lag_seconds", Self.loopLagBuckets,
            "How late the event loop ran its timer and queued jobs.")
        ingestFixes = ["stored", "superseded", "older"].map { result in
            (
                result,
                counter(
                    "cairn_ingest_fixes_total",
                    "Trackers' fixes the filters let through: stored as the latest, superseded by a newer one "
                        + "of the same report, or older than the stored latest.", labels: [("result", result)])
            )
        }
        ingestFiltered = IngestDrop.allCases.map { reason in
            (
                reason,
                counter(
                    "cairn_ingest_filtered_total", "Trackers' fixes dropped by a filter (answered 200, not stored).",
                    labels: [("reason", reason.rawValue)])
            )
        }
        ingestReanchors = SpeedReanchor.allCases.map { cause in
            (
                cause,
                counter(
                    "cairn_ingest_speed_reanchors_total",
                    "Fixes the speed filter accepted as a new anchor: after N rejections in a row, or a long gap.",
                    labels: [("cause", cause.rawValue)])
            )
        }
        ingestRefused = IngestRefusal.labels.map { reason in
            (
                reason,
                counter(
                    "cairn_ingest_refused_total",
                    "Tracker reports refused whole: malformed (400), bad credentials (401), inactive tracker "
                        + "(403), store unavailable (503).", labels: [("reason", reason)])
            )
        }
        places = PlaceMetrics(
            nearest: counter("cairn_places_nearest_total", "places.nearest queries answered."),
            nearestSeconds: histogram(
                "cairn_places_nearest_seconds", Self.placesNearestBuckets,
                "Time the hub spent answering one places.nearest query (validation and search, not the encoding)."),
            searches: counter("cairn_places_searches_total", "places.search queries answered."),
            upserts: counter("cairn_places_upserts_total", "Places written by operators over WebSocket."),
            removals: counter("cairn_places_removals_total", "Places removed by operators over WebSocket."),
            reloads: counter(
                "cairn_places_reloads_total",
                "Places read again from the store (places.reload or SIGHUP, e.g. after cairn places import)."),
            reloadFailures: counter(
                "cairn_places_reload_failures_total", "Reloads of the places that failed (memory unchanged)."),
            loaded: gauge("cairn_places_loaded", "Places read by the last load from the store (start or reload)."),
            byCategory: { category in
                gauge("cairn_places", "Places in memory, by category.", labels: [("category", category)])
            })
    }

    /// A metric's full name and HELP text as swift-prometheus describes them (no namespace or unit suffix is
    /// added: `name` is already the whole Prometheus name).
    private static func descriptor(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }

    // MARK: TelemetrySink

    /// Records one fan-out latency.
    public func recordFanoutLatency(nanoseconds: Int64) { fanoutLatency.recordNanoseconds(nanoseconds) }

    /// Records one event-loop lag sample.
    public func recordLoopLag(nanoseconds: Int64) { loopLag.recordNanoseconds(nanoseconds) }

    /// Records how long one places.nearest query took.
    public func recordPlacesNearest(nanoseconds: Int64) { places.nearestSeconds.recordNanoseconds(nanoseconds) }

    // MARK: Rendering

    /// Brings every metric up to `snapshot` and returns the registry in the Prometheus text format.
    public func render(_ snapshot: StatsSnapshot) -> [UInt8] {
        update(snapshot)
        return registry.emitToBuffer()
    }

    private func update(_ s: StatsSnapshot) {
        for (state, meter) in connections {
            switch state {
            case "open": meter.set(s.connections)
            case "authenticated": meter.set(s.authenticated)
            case "watching": meter.set(s.watching)
            default: meter.set(s.statsWatchers)
            }
        }
        var now = Totals()
        now.opened = s.connectionsOpened
        now.messagesIn = s.messagesReceived
        now.messagesOut = s.messagesSent
        now.bytesIn = s.bytesReceived
        now.bytesOut = s.bytesSent
        now.positions = s.positionsAccepted
        now.deliveries = s.deliveries
        func grow(_ counter: CoreMetrics.Counter, _ before: UInt64, _ after: UInt64) {
            if after > before { counter.increment(by: Int64(clamping: after - before)) }
        }
        grow(connectionsOpened, last.opened, now.opened)
        grow(messagesReceived, last.messagesIn, now.messagesIn)
        grow(messagesSent, last.messagesOut, now.messagesOut)
        grow(bytesReceived, last.bytesIn, now.bytesIn)
        grow(bytesSent, last.bytesOut, now.bytesOut)
        grow(positionsReceived, last.positions, now.positions)
        grow(deliveries, last.deliveries, now.deliveries)
        last = now
        let ingest = s.ingest
        for (result, counter) in ingestFixes {
            switch result {
            case "stored": grow(counter, lastIngest.stored, ingest.stored)
            case "superseded": grow(counter, lastIngest.superseded, ingest.superseded)
            default: grow(counter, lastIngest.older, ingest.older)
            }
        }
        for (reason, counter) in ingestFiltered {
            grow(counter, lastIngest.dropped[reason] ?? 0, ingest.dropped[reason] ?? 0)
        }
        for (cause, counter) in ingestReanchors {
            grow(counter, lastIngest.reanchors[cause] ?? 0, ingest.reanchors[cause] ?? 0)
        }
        for (reason, counter) in ingestRefused {
            grow(counter, lastIngest.refused[reason] ?? 0, ingest.refused[reason] ?? 0)
        }
        lastIngest = ingest
        places.update(s.places)

        positionsLive.set(s.positionsLive)
        if let relics = s.relicsLive {
            if relicsLive == nil {
                relicsLive = Meter(
                    label: "cairn_relics_live", dimensions: [],
                    handler: registry.makeGauge(
                        descriptor: Self.descriptor("cairn_relics_live", "Relics live in memory."),
                        labels: []),
                    factory: factory)
            }
            relicsLive?.set(relics)
        }
        pendingCoalesced.set(s.pendingCoalesced)
        pendingBytes.set(s.pendingOutboundBytes)
        storeInFlight.set(s.operationsInFlight)
        snapshotPendingRows.set(s.pendingSnapshotRows)
        if let snap = s.lastSnapshot {
            snapshotDuration.set(Double(snap.durationMs) / 1000)
            snapshotRows.set(snap.rows)
            snapshotAge.set(Double(snap.ageMs) / 1000)
        }
        if let rss = s.residentBytes { residentMemory.set(rss) }
        uptime.set(s.uptimeSeconds)
        if let cluster = s.cluster { updateCluster(cluster) }
    }

    private func updateCluster(_ cluster: ClusterReading) {
        if clusterRedisUp == nil {
            clusterRedisUp = Meter(
                label: "cairn_cluster_redis_up", dimensions: [],
                handler: registry.makeGauge(
                    descriptor: Self.descriptor(
                        "cairn_cluster_redis_up", "1 while this node's connections to Redis are up, 0 while away."),
                    labels: []),
                factory: factory)
            clusterReconnects = CoreMetrics.Counter(
                label: "cairn_cluster_redis_reconnects_total", dimensions: [],
                handler: registry.makeCounter(
                    descriptor: Self.descriptor(
                        "cairn_cluster_redis_reconnects_total", "Times the link to Redis came back after a loss."),
                    labels: []),
                factory: factory)
        }
        clusterRedisUp?.set(cluster.redisUp ? 1 : 0)
        if cluster.reconnects > lastReconnects, let counter = clusterReconnects {
            counter.increment(by: Int64(clamping: cluster.reconnects - lastReconnects))
        }
        lastReconnects = max(lastReconnects, cluster.reconnects)
        updateClusterMessages([cluster.published, cluster.received, cluster.dropped, cluster.nodeNameConflicts])
    }

    private func updateClusterMessages(_ readings: [UInt64]) {
        if clusterMessages.isEmpty {
            let described = [
                ("cairn_cluster_messages_published_total", "Cross-node position messages this node published."),
                ("cairn_cluster_messages_received_total", "Cross-node position messages received for viewers here."),
                ("cairn_cluster_messages_dropped_total", "Cross-node messages dropped: malformed or misaddressed."),
                (
                    "cairn_cluster_node_name_conflicts_total",
                    "Times another running hub was found using this node's name (cluster.node must be unique)."
                ),
            ]
            clusterMessages = described.map { name, help in
                let counter = CoreMetrics.Counter(
                    label: name, dimensions: [],
                    handler: registry.makeCounter(descriptor: Self.descriptor(name, help), labels: []),
                    factory: factory)
                return (counter, 0)
            }
        }
        for (i, reading) in readings.enumerated() where reading > clusterMessages[i].last {
            clusterMessages[i].counter.increment(by: Int64(clamping: reading - clusterMessages[i].last))
            clusterMessages[i].last = reading
        }
    }
}
