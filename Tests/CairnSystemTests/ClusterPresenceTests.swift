// Two real `cairn serve` processes sharing one real redis-server: presence across nodes, the degraded state while
// Redis is away or frozen (/healthz still 200, the metrics gauge at 0) and the return (reconnect counted, presence
// back).
// Accounts and friendships live in each node's own SQLite today (docs/ARCHITECTURE.md, "Several nodes"), so the
// test registers the same two accounts in the same order on both nodes (ids 1 and 2 on each) and befriends them on
// each, through the real ops; sharing one data directory is not possible (the directory lock) nor honest.
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite(.enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed"))
    struct ClusterPresenceTests {
        final class Node {
            let process: TestServerProcess
            let port: Int
            let data: String

            init(_ name: String, redis: RedisServerProcess) throws {
                data = NSTemporaryDirectory() + "cairn-cluster-\(name)-\(UUID().uuidString)"
                process = try TestServerProcess(arguments: [
                    "serve", "--host", "127.0.0.1", "--port", "0", "--data", data, "--scrypt-cost", "10",
                    "--signups-per-address", "0", "--redis-url", redis.url, "--cluster-node", name,
                    "--cluster-prefix", "it", "--cluster-presence-refresh", "1", "--cluster-key",
                    String(repeating: "c1", count: 32),
                ])
                port = try process.waitForListeningPort(timeout: 60)
            }

            func health() throws -> (status: Int, body: [String: Any]) {
                let response = try HTTPClient.get(port: port, path: "/healthz")
                return (response.status, try response.jsonObject())
            }

            func metrics() throws -> String { try HTTPClient.get(port: port, path: "/metrics").text }

            func login(_ username: String) throws -> WebSocketClient {
                let c = try WebSocketClient(port: port, timeout: 10)
                _ = try c.requestOK("login", ["username": username, "password": "password1"])
                return c
            }

            /// Registers alice (1) and bob (2) and makes them friends, then closes both sessions.
            func seed() throws {
                let alice = try registerMember(port: port, "alice")
                let bob = try registerMember(port: port, "bob")
                #expect(alice.1 == 1 && bob.1 == 2)
                _ = try alice.0.requestOK("friend.request", ["user": bob.1])
                _ = try bob.0.requestOK("friend.accept", ["user": alice.1])
                alice.0.close()
                bob.0.close()
            }

            deinit { try? FileManager.default.removeItem(atPath: data) }
        }

        /// Whether `client`'s friend with id `friend` is listed online.
        static func listsOnline(_ client: WebSocketClient, _ friend: Int) throws -> Bool? {
            let reply = try client.requestOK("friend.list")
            let friends = reply["friends"] as? [[String: Any]] ?? []
            return friends.first { $0["id"] as? Int == friend }?["online"] as? Bool
        }

        /// Polls `condition` every 50 ms for up to `seconds`.
        static func eventually(_ seconds: Double = 10, _ condition: () throws -> Bool) rethrows -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if try condition() { return true }
                usleep(50_000)
            }
            return try condition()
        }

        @Test func aFriendOnAnotherNodeIsOnlineAndHearsPresence() throws {
            let redis = try RedisServerProcess()
            let a = try Node("a", redis: redis)
            let b = try Node("b", redis: redis)
            try a.seed()
            try b.seed()
            #expect(try a.health().body["cluster"] as? String == "ok")

            let bob = try b.login("bob")
            #expect(try Self.listsOnline(bob, 1) == false)
            let alice = try a.login("alice")
            // Bob, on node b, hears alice come online on node a, and his friend list says so.
            let online = try bob.nextEvent("presence")
            #expect(online["user"] as? Int == 1 && online["online"] as? Bool == true)
            #expect(try Self.listsOnline(bob, 1) == true)
            // And the other way round.
            #expect(try Self.listsOnline(alice, 2) == true)

            // A second connection of alice on node b, then the one on a closes: she is still online for bob.
            let aliceOnB = try b.login("alice")
            alice.close()
            #expect(try bob.pollObject(within: 1.5).map { $0["ev"] as? String != "presence" } ?? true)
            #expect(try Self.listsOnline(bob, 1) == true)
            aliceOnB.close()
            let offline = try bob.nextEvent("presence")
            #expect(offline["user"] as? Int == 1 && offline["online"] as? Bool == false)
            #expect(try Self.listsOnline(bob, 1) == false)
        }

        @Test func redisAwayIsDegradedAndItsReturnRestoresPresence() throws {
            let redis = try RedisServerProcess()
            let a = try Node("a", redis: redis)
            let b = try Node("b", redis: redis)
            try a.seed()
            try b.seed()
            let alice = try a.login("alice")
            let bob = try b.login("bob")
            #expect(try Self.eventually { try Self.listsOnline(bob, 1) == true })
            #expect(try b.metrics().contains("cairn_cluster_redis_up 1"))

            redis.kill()
            // Still 200 (the balancer keeps the node), reported degraded; the gauge says Redis is away.
            #expect(try Self.eventually { try b.health().body["cluster"] as? String == "degraded" })
            #expect(try b.health().status == 200)
            #expect(try b.metrics().contains("cairn_cluster_redis_up 0"))
            // Presence on the other node is unknown while away: shown offline rather than stale.
            #expect(try Self.listsOnline(bob, 1) == false)
            // The node keeps serving its own connections.
            #expect(try bob.requestOK("whoami")["user"] != nil)

            try redis.restart()  // empty: nothing persisted
            #expect(try Self.eventually { try b.health().body["cluster"] as? String == "ok" })
            #expect(try Self.eventually { try Self.listsOnline(bob, 1) == true })
            #expect(try Self.eventually { try Self.listsOnline(alice, 2) == true })  // a reconnects on its own
            #expect(try b.metrics().contains("cairn_cluster_redis_reconnects_total 1"))
            #expect(a.process.isRunning && b.process.isRunning)
        }

        /// A frozen Redis (SIGSTOP: connections stay open, nothing answers) is noticed within the documented bound
        /// (three heartbeats 2 s apart, counted from the first beat after the freeze: 8 s), local users are served
        /// throughout, and once Redis runs again (SIGCONT) the node is back without a restart.
        @Test func aFrozenRedisIsDegradedWithinTheBoundWhileLocalUsersAreServed() throws {
            let redis = try RedisServerProcess()
            let a = try Node("a", redis: redis)
            let b = try Node("b", redis: redis)
            try a.seed()
            try b.seed()
            let alice = try a.login("alice")
            let bob = try b.login("bob")
            #expect(try Self.eventually { try Self.listsOnline(bob, 1) == true })

            redis.pause()
            var paused = true
            defer { if paused { redis.resume() } }
            let frozenAt = Date()
            // Nothing on the loop waits for Redis: bob is answered at once, before the freeze is even noticed.
            #expect(try bob.requestOK("pos", ["lat": 48.85, "lon": 2.35])["ok"] as? Bool == true)
            #expect(try b.health().body["cluster"] as? String == "ok")
            // The bound is 8 s; 7 s of slack for a loaded machine (polled every 50 ms).
            #expect(try Self.eventually(15) { try b.health().body["cluster"] as? String == "degraded" })
            let noticedAfter = Date().timeIntervalSince(frozenAt)
            #expect(noticedAfter < 15, "noticed after \(noticedAfter) s")
            #expect(try b.health().status == 200)
            #expect((try bob.requestOK("whoami")["user"] as? [String: Any])?["username"] as? String == "bob")
            #expect(try Self.listsOnline(bob, 1) == false)  // unknown while away: shown offline rather than stale

            redis.resume()
            paused = false
            #expect(try Self.eventually(20) { try b.health().body["cluster"] as? String == "ok" })
            #expect(try Self.eventually(20) { try Self.listsOnline(bob, 1) == true })
            #expect(try Self.eventually(20) { try Self.listsOnline(alice, 2) == true })
            #expect(try PrometheusText(b.metrics()).value("cairn_cluster_redis_reconnects_total") ?? 0 >= 1)
        }

        @Test func aNodeShuttingDownTakesItsUsersOffline() throws {
            let redis = try RedisServerProcess()
            let a = try Node("a", redis: redis)
            let b = try Node("b", redis: redis)
            try a.seed()
            try b.seed()
            let bob = try b.login("bob")
            let alice = try a.login("alice")
            #expect(try bob.nextEvent("presence")["online"] as? Bool == true)
            a.process.signal(SIGTERM)  // alice's connection is closed with 1001; her leaving reaches node b
            let started = Date()
            let offline = try bob.nextEvent("presence", timeout: 10)
            #expect(offline["user"] as? Int == 1 && offline["online"] as? Bool == false)
            #expect(Date().timeIntervalSince(started) < 3, "not left to expire (3 s here)")
            #expect(try a.process.waitForExit(timeout: 20) == 0)
            _ = alice
        }

        @Test func aSingleNodeReportsNoCluster() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let health = try hub.health()
            #expect(health["cluster"] == nil)
            #expect(health["status"] as? String == "ok")
            #expect(!(try HTTPClient.get(port: hub.port, path: "/metrics").text.contains("cairn_cluster")))
        }
    }
}
