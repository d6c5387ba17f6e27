// The Prometheus exporter: its output parses strictly as the text format, names follow Prometheus conventions,
// counters only grow and grow by what the readings grew, gauges follow the latest reading, histograms count every
// sample, and a metric that nothing reports (relics before a relic layer is wired) is absent rather than zero.
import CairnCore
import CairnMetrics
import CairnTestSupport
import Testing

@Suite(.timeLimit(.minutes(5)))
struct PrometheusExporterTests {
    func parse(_ bytes: [UInt8]) throws -> PrometheusText { try PrometheusText(String(decoding: bytes, as: UTF8.self)) }

    @Test func outputIsValidAndNamedByConvention() throws {
        let exporter = PrometheusExporter()
        var s = StatsSnapshot(ts: 1000)
        s.connections = 3
        s.authenticated = 2
        s.messagesReceived = 10
        exporter.recordFanoutLatency(nanoseconds: 1_500_000)
        let text = try parse(exporter.render(s))
        #expect(text.types["cairn_connections"] == "gauge")
        #expect(text.types["cairn_messages_received_total"] == "counter")
        #expect(text.types["cairn_fanout_latency_seconds"] == "histogram")
        #expect(text.types["cairn_event_loop_lag_seconds"] == "histogram")
        #expect(text.help["cairn_messages_received_total"]?.isEmpty == false)
        for (name, type) in text.types where type == "counter" { #expect(name.hasSuffix("_total"), "\(name)") }
        #expect(text.types.keys.allSatisfy { $0.hasPrefix("cairn_") })
        #expect(text.value("cairn_connections", ["state": "open"]) == 3)
        #expect(text.value("cairn_connections", ["state": "authenticated"]) == 2)
        #expect(text.value("cairn_messages_received_total") == 10)
        #expect(text.value("cairn_fanout_latency_seconds_count") == 1)
        #expect(text.value("cairn_fanout_latency_seconds_bucket", ["le": "0.001"]) == 0)
        #expect(text.value("cairn_fanout_latency_seconds_bucket", ["le": "0.0025"]) == 1)
        #expect(text.types["cairn_relics_live"] == nil)
    }

    @Test func countersGrowByWhatTheReadingsGrew() throws {
        let exporter = PrometheusExporter()
        var s = StatsSnapshot(ts: 1000)
        s.messagesSent = 5
        s.bytesSent = 500
        s.positionsLive = 7
        _ = exporter.render(s)
        s.messagesSent = 12
        s.bytesSent = 900
        s.positionsLive = 4
        s.relicsLive = 9
        s.lastSnapshot = SnapshotReading(ageMs: 2000, durationMs: 150, rows: 300)
        let text = try parse(exporter.render(s))
        #expect(text.value("cairn_messages_sent_total") == 12)
        #expect(text.value("cairn_bytes_sent_total") == 900)
        #expect(text.value("cairn_positions_live") == 4)
        #expect(text.value("cairn_relics_live") == 9)
        #expect(text.value("cairn_snapshot_duration_seconds") == 0.15)
        #expect(text.value("cairn_snapshot_rows") == 300)
    }

    @Test func placesMetricsFollowTheReadings() throws {
        let exporter = PrometheusExporter()
        var s = StatsSnapshot(ts: 1000)
        let empty = try parse(exporter.render(s))
        #expect(empty.types["cairn_places_nearest_total"] == "counter")
        #expect(empty.types["cairn_places_nearest_seconds"] == "histogram")
        #expect(empty.types["cairn_places_reloads_total"] == "counter")
        #expect(empty.value("cairn_places_nearest_total") == 0)
        s.places.byCategory = ["ski_area": 3, "peak": 5]
        s.places.nearest = 4
        s.places.searches = 2
        s.places.reloads = 1
        s.places.loaded = 8
        exporter.recordPlacesNearest(nanoseconds: 3_000)
        exporter.recordPlacesNearest(nanoseconds: 70_000)
        let first = try parse(exporter.render(s))
        #expect(first.types["cairn_places"] == "gauge")
        #expect(first.value("cairn_places", ["category": "ski_area"]) == 3)
        #expect(first.value("cairn_places", ["category": "peak"]) == 5)
        #expect(first.value("cairn_places_nearest_total") == 4)
        #expect(first.value("cairn_places_searches_total") == 2)
        #expect(first.value("cairn_places_reloads_total") == 1)
        #expect(first.value("cairn_places_loaded") == 8)
        #expect(first.value("cairn_places_nearest_seconds_count") == 2)
        #expect(first.value("cairn_places_nearest_seconds_bucket", ["le": "0.000005"]) == 1)
        #expect(first.value("cairn_places_nearest_seconds_bucket", ["le": "0.0001"]) == 2)
        s.places.byCategory = ["peak": 6]  // the last ski area removed: its series stays, at 0
        s.places.nearest = 9
        s.places.upserts = 1
        s.places.removals = 3
        let second = try parse(exporter.render(s))
        #expect(second.value("cairn_places", ["category": "ski_area"]) == 0)
        #expect(second.value("cairn_places", ["category": "peak"]) == 6)
        #expect(second.value("cairn_places_nearest_total") == 9)
        #expect(second.value("cairn_places_upserts_total") == 1)
        #expect(second.value("cairn_places_removals_total") == 3)
    }

    @Test func ingestCountersAreLabelledAndGrow() throws {
        let exporter = PrometheusExporter()
        var s = StatsSnapshot(ts: 1000)
        let empty = try parse(exporter.render(s))
        #expect(empty.types["cairn_ingest_filtered_total"] == "counter")
        for reason in IngestDrop.allCases {
            #expect(empty.value("cairn_ingest_filtered_total", ["reason": reason.rawValue]) == 0)
        }
        #expect(empty.value("cairn_ingest_fixes_total", ["result": "stored"]) == 0)
        #expect(empty.value("cairn_ingest_speed_reanchors_total", ["cause": "gap"]) == 0)
        #expect(empty.value("cairn_ingest_refused_total", ["reason": "malformed"]) == 0)
        s.ingest.stored = 4
        s.ingest.superseded = 2
        s.ingest.older = 1
        s.ingest.dropped = [.zero: 3, .speed: 2]
        s.ingest.reanchors = [.count: 1]
        s.ingest.refused = ["credentials": 5]
        _ = exporter.render(s)
        s.ingest.stored = 6
        s.ingest.dropped[.speed] = 7
        let text = try parse(exporter.render(s))
        #expect(text.value("cairn_ingest_fixes_total", ["result": "stored"]) == 6)
        #expect(text.value("cairn_ingest_fixes_total", ["result": "superseded"]) == 2)
        #expect(text.value("cairn_ingest_fixes_total", ["result": "older"]) == 1)
        #expect(text.value("cairn_ingest_filtered_total", ["reason": "zero"]) == 3)
        #expect(text.value("cairn_ingest_filtered_total", ["reason": "speed"]) == 7)
        #expect(text.value("cairn_ingest_filtered_total", ["reason": "future"]) == 0)
        #expect(text.value("cairn_ingest_speed_reanchors_total", ["cause": "count"]) == 1)
        #expect(text.value("cairn_ingest_refused_total", ["reason": "credentials"]) == 5)
    }

    @Test func theStrictReaderRejectsMalformedText() {
        #expect(throws: PrometheusText.Invalid.self) { try PrometheusText("# TYPE a counter\na 1") }  // no newline
        #expect(throws: PrometheusText.Invalid.self) { try PrometheusText("a 1\n") }  // no TYPE
        #expect(throws: PrometheusText.Invalid.self) { try PrometheusText("# TYPE 1a counter\n") }
        #expect(throws: PrometheusText.Invalid.self) { try PrometheusText("# TYPE a gauge\na{x=1} 1\n") }
        #expect(throws: PrometheusText.Invalid.self) { try PrometheusText("# TYPE a gauge\na one\n") }
        #expect(throws: PrometheusText.Invalid.self) {
            try PrometheusText(
                "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n")
        }
        #expect(throws: PrometheusText.Invalid.self) {
            try PrometheusText(
                "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 3\n")
        }
        #expect(throws: Never.self) {
            try PrometheusText("# HELP a A thing.\n# TYPE a gauge\na{x=\"q\\\"\"} -1.5e3\n")
        }
    }
}
