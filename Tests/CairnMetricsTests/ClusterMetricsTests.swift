// The cluster link's metrics: absent on a single node; on a node among several, a 0/1 gauge that follows the latest
// reading and a reconnect counter that grows by what the readings grew.
import CairnDomain
import CairnMetrics
import CairnTestSupport
import Testing

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
}
