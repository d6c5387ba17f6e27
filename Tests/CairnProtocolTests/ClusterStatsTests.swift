import CairnHub
import CairnHubTestSupport
import CairnLoop
import CairnProtocol
import CairnStats
import Foundation
import Synchronization
import Testing

// The cluster link as the stats channel and the router's health report it: `null` / absent on a single node; on a
// node among several, Redis up or down and the reconnects, following the reading at each tick.
@testable import CairnCore

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct ClusterStatsTests {
    static let gauges = TransportGauges(
        pendingCoalesced: 0, pendingOutboundBytes: 0, residentBytes: nil, uptimeSeconds: 1)

    func stats(_ h: HubHarness) -> [String: Any]? {
        h.hub.publishStats { Self.gauges }
        return h.outbound.take(1).last { $0["ev"] as? String == "stats" }
    }

    @Test func aSingleNodeShowsNoCluster() async throws {
        let h = HubHarness()
        let id = try await h.user(1, "ops")
        h.store.state.withLock { _ = $0.ops.insert(id) }
        _ = try await h.request(1, #"{"id":7,"op":"stats.watch"}"#, id: 7, completions: 1)
        let event = try #require(stats(h))
        #expect(event.keys.contains("cluster"))
        #expect(event["cluster"] is NSNull)
        #expect(h.router.health.cluster == nil)
    }

    @Test func aNodeAmongSeveralShowsItsLink() async throws {
        let h = HubHarness()
        var reading = ClusterReading(redisUp: true, reconnects: 0)
        h.hub.statsChannel.clusterReading = { reading }
        let id = try await h.user(1, "ops")
        h.store.state.withLock { _ = $0.ops.insert(id) }
        _ = try await h.request(1, #"{"id":7,"op":"stats.watch"}"#, id: 7, completions: 1)
        var cluster = try #require(stats(h)?["cluster"] as? [String: Any])
        #expect(cluster["redis"] as? String == "up")
        #expect(cluster["reconnects_total"] as? Int == 0)
        #expect(h.router.health.cluster == "ok")
        reading = ClusterReading(redisUp: false, reconnects: 0)
        cluster = try #require(stats(h)?["cluster"] as? [String: Any])
        #expect(cluster["redis"] as? String == "down")
        #expect(h.router.health.cluster == "degraded")
        reading = ClusterReading(
            redisUp: true, reconnects: 1, published: 5, received: 3, dropped: 1, nodeNameConflicts: 2)
        cluster = try #require(stats(h)?["cluster"] as? [String: Any])
        #expect(cluster["redis"] as? String == "up" && cluster["reconnects_total"] as? Int == 1)
        #expect(cluster["published_total"] as? Int == 5 && cluster["received_total"] as? Int == 3)
        #expect(cluster["dropped_total"] as? Int == 1)
        #expect(cluster["node_name_conflicts_total"] as? Int == 2)
    }
}
