// Clock skew between nodes: three real `cairn serve` processes on one PostgreSQL and one redis-server, node b's clock
// ten minutes behind and node c's ten minutes ahead (`CAIRN_TEST_CLOCK_OFFSET_MS`, the hub's injected clock read
// off). Rule versions and presence expiry come from node clocks. A hide through the slow node b, after a reveal
// through a and after one through c (twenty minutes ahead of b), is answered and holds: node a, where alice's
// positions arrive, delivers nothing more to bob on c; friends on the skewed nodes are seen online.
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite(
        .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed"),
        .enabled(if: PostgresServerProcess.isAvailable, "PostgreSQL is not installed"))
    struct ClusterClockSkewTests {
        typealias Node = ControlChannelTests.Node
        static let tenMinutesMs = 600_000

        @Test func aHideThroughANodeTenMinutesBehindHoldsAfterRevealsThroughNodesAhead() throws {
            let url = try PostgresServerProcess.freshURL()
            let redis = try RedisServerProcess()
            let a = try Node("a", url: url, redis: redis)
            let b = try Node(
                "b", url: url, redis: redis, environment: ["CAIRN_TEST_CLOCK_OFFSET_MS": "-\(Self.tenMinutesMs)"])
            let c = try Node(
                "c", url: url, redis: redis, environment: ["CAIRN_TEST_CLOCK_OFFSET_MS": "\(Self.tenMinutesMs)"])
            try b.process.waitForLine(containing: "clock reads -600000 ms off", timeout: 10)
            let (aliceFirst, alice) = try registerMember(port: a.port, "alice")
            let (bobFirst, bob) = try registerMember(port: a.port, "bob")
            _ = try aliceFirst.requestOK("friend.request", ["user": bob])
            _ = try bobFirst.requestOK("friend.accept", ["user": alice])
            aliceFirst.close()
            bobFirst.close()

            let bobOnC = try c.watcher("bob")
            let aliceOnA = try a.login("alice")
            let aliceOnB = try b.login("alice")
            // Presence written by the node ahead (c) is seen by a and by the node behind (b).
            #expect(ClusterPresenceTests.eventually { ControlChannelTests.seesOnline(aliceOnA, bob) })
            #expect(ClusterPresenceTests.eventually { ControlChannelTests.seesOnline(aliceOnB, bob) })

            for revealedThrough in [aliceOnA, try c.login("alice")] {
                _ = try revealedThrough.requestOK("share.set", ["user": bob, "level": "precise"])
                #expect(
                    ClusterPresenceTests.eventually(5) {
                        _ = try? aliceOnA.requestOK("pos", ["lat": 52.52, "lon": 13.405])
                        return (try? ControlChannelTests.nextPosition(bobOnC, of: alice, within: 0.3)) != nil
                    }, "the reveal did not take")
                // Hidden through b, whose clock is behind the reveal's: answered once a and c applied it.
                _ = try aliceOnB.requestOK("share.set", ["user": bob, "level": "hidden"])
                _ = try aliceOnA.requestOK("pos", ["lat": 52.53, "lon": 13.41])
                #expect(try ControlChannelTests.nextPosition(bobOnC, of: alice, within: 1.5) == nil)
            }
            // And the rule that stays is the hide, on every node: read back through a fresh session on each.
            for node in [a, b, c] {
                let session = try node.login("alice")
                let levels = try #require(try session.requestOK("share.list")["levels"] as? [[String: Any]])
                let entry = try #require(levels.first { $0["user"] as? Int == bob })
                #expect(entry["level"] as? String == "hidden", "\(entry)")
            }
            withExtendedLifetime((a, b, c, redis)) {}
        }
    }
}
