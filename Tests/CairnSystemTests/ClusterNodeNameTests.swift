// Two real `cairn serve` processes given one `cluster.node` on one real redis-server: the one started second stops
// by itself (exit 78, the reason on standard error) within a few presence refreshes, the first keeps serving, logs
// the conflict and counts it at /metrics, and its users are back in presence once the second is gone. A hub killed
// and restarted at once under its own name (its predecessor's claim still in Redis) is not taken for a duplicate.
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite(.enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed"))
    struct ClusterNodeNameTests {
        typealias Node = ClusterPresenceTests.Node

        @Test func aSecondRunningHubWithTheSameNameStopsAndTheFirstKeepsServing() throws {
            let redis = try RedisServerProcess()
            let first = try Node("a", redis: redis)
            try first.seed()
            let alice = try first.login("alice")
            #expect(try ClusterPresenceTests.eventually { try redis.command(["ZSCORE", "it:presence", "1/a"]) != nil })

            let second = try Node("a", redis: redis)
            // Presence refreshes every second here: the second claims at its start and again a second later.
            let status = try second.process.waitForExit(timeout: 30)
            #expect(status == 78, "\(second.process.output)")
            #expect(second.process.output.contains("cluster.node \"a\" is in use by another running hub"))

            try first.process.waitForLine(containing: "another running hub uses this node's name \"a\"", timeout: 10)
            let conflicts = try PrometheusText(first.metrics()).value("cairn_cluster_node_name_conflicts_total")
            #expect((conflicts ?? 0) >= 1)
            #expect(first.process.isRunning)
            #expect((try alice.requestOK("whoami")["user"] as? [String: Any])?["username"] as? String == "alice")
            // The second, having no alice, took her out of presence under the shared name; the first puts her back.
            #expect(try ClusterPresenceTests.eventually { try redis.command(["ZSCORE", "it:presence", "1/a"]) != nil })
            #expect(try first.health().body["cluster"] as? String == "ok")
        }

        @Test func aHubKilledAndRestartedAtOnceKeepsItsName() throws {
            let redis = try RedisServerProcess()
            let before = try Node("a", redis: redis)
            var claimed: String?
            #expect(
                try ClusterPresenceTests.eventually {
                    claimed = try redis.command(["HGET", "it:instances", "a"])
                    return claimed != nil
                })
            before.process.kill()
            _ = try before.process.waitForExit(timeout: 10)

            let after = try Node("a", redis: redis)
            // Its first claim replaces what the killed process left; then three more refreshes (the second claim,
            // the one that would find a running duplicate, is answered before the next refresh is sent).
            #expect(
                try ClusterPresenceTests.eventually(20) {
                    let now = try redis.command(["HGET", "it:instances", "a"])
                    return now != nil && now != claimed
                })
            var refreshes: [String] = []
            #expect(
                try ClusterPresenceTests.eventually(20) {
                    if let expiry = try redis.command(["HGET", "it:nodes", "a"]), expiry != refreshes.last {
                        refreshes.append(expiry)
                    }
                    return refreshes.count >= 4
                })
            #expect(after.process.isRunning, "\(after.process.output)")
            #expect(!after.process.output.contains("in use by another running hub"))
            #expect(try after.health().status == 200)
            let conflicts = try PrometheusText(after.metrics()).value("cairn_cluster_node_name_conflicts_total")
            #expect(conflicts == 0)
        }
    }
}
