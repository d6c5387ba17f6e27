// The cluster link's metrics: absent on a single node; on a node among several, a 0/1 gauge that follows the latest
// reading and a reconnect counter that grows by what the readings grew; the cross-node message counters likewise.
import CairnCore
import CairnMetrics
import CairnTestSupport
import Testing

@Suite(.timeLimit(.minutes(5)))
struct ClusterMetricsTests {
    func parse(_ bytes: [UInt8]) throws -> PrometheusText { try PrometheusText(String(decoding: bytes, as: UTF8.self)) }

    @Test func aSingleNodeHasNoClusterMetrics() throws {
        let text = try parse(PrometheusExporter().render(StatsSnapshot(ts: 1000)))
        #expect(text.types.keys.allSatisfy { !$0.hasPrefix("cairn_cluster") })
    }

    @Test func theGaugeFollowsRedisAndTheCounterItsReconnects() throws {
        let exporter = PrometheusExporter()
        var s = StatsSnapshot(ts: 1000)
        s.cluster = ClusterReading(redisUp: true, reconnects: 0)
        var text = try parse(exporter.render(s))
        #expect(text.types["cairn_cluster_redis_up"] == "gauge")
        #expect(text.types["cairn_cluster_redis_reconnects_total"] == "counter")
        #expect(text.value("cairn_cluster_redis_up") == 1)
        #expect(text.value("cairn_cluster_redis_reconnects_total") == 0)
        s.cluster = ClusterReading(redisUp: false, reconnects: 0)
        text = try parse(exporter.render(s))
        #expect(text.value("cairn_cluster_redis_up") == 0)
        s.cluster = ClusterReading(redisUp: true, reconnects: 2)
        text = try parse(exporter.render(s))
        #expect(text.value("cairn_cluster_redis_up") == 1)
        #expect(text.value("cairn_cluster_redis_reconnects_total") == 2)
        text = try parse(exporter.render(s))
        #expect(text.value("cairn_cluster_redis_reconnects_total") == 2)
    }

    @Test func theMessageCountersFollowTheReadings() throws {
        let exporter = PrometheusExporter()
        var s = StatsSnapshot(ts: 1000)
        s.cluster = ClusterReading(redisUp: true, reconnects: 0, published: 4, received: 2, dropped: 1)
        var text = try parse(exporter.render(s))
        #expect(text.types["cairn_cluster_messages_published_total"] == "counter")
        #expect(text.value("cairn_cluster_messages_published_total") == 4)
        #expect(text.value("cairn_cluster_messages_received_total") == 2)
        #expect(text.value("cairn_cluster_messages_dropped_total") == 1)
        s.cluster = ClusterReading(redisUp: true, reconnects: 0, published: 10, received: 2, dropped: 3)
        text = try parse(exporter.render(s))
        #expect(text.value("cairn_cluster_messages_published_total") == 10)
        #expect(text.value("cairn_cluster_messages_received_total") == 2)
        #expect(text.value("cairn_cluster_messages_dropped_total") == 3)
    }

    @Test func theNodeNameConflictsCounterFollowsTheReadings() throws {
        let exporter = PrometheusExporter()
        var s = StatsSnapshot(ts: 1000)
        s.cluster = ClusterReading(redisUp: true, reconnects: 0)
        var text = try parse(exporter.render(s))
        #expect(text.types["cairn_cluster_node_name_conflicts_total"] == "counter")
        #expect(text.value("cairn_cluster_node_name_conflicts_total") == 0)
        s.cluster = ClusterReading(redisUp: true, reconnects: 0, nodeNameConflicts: 2)
        text = try parse(exporter.render(s))
        #expect(text.value("cairn_cluster_node_name_conflicts_total") == 2)
    }
}
