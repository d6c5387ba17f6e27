// Positions across nodes: two real `cairn serve` processes sharing one real redis-server. A move accepted on node
// a reaches alice's friends connected to node b at the level each may see — precise with its accuracy, approximate
// snapped to the grid, hidden not at all — with privacy applied on node a; a hide made on a reaches b as
// `pos.hidden`; a friend who connects on b after alice moved gets her position; and with Redis killed, node a's own
// watchers keep getting moves while cross-node delivery resumes once Redis is back.
// Accounts and friendships live in each node's own SQLite today (the shared PostgreSQL store is not on main yet;
// docs/ARCHITECTURE.md, "Several nodes"), so the test registers the same five accounts in the same order on both
// nodes (alice 1, bob 2, carol 3, dave 4, erin 5: ids agree) and makes alice friends with the others on each.
// Alice's sharing rules are set on node a only: privacy is applied on the owner's node, and node b has no fix of
// alice of its own to show.
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite(.enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed"))
    struct ClusterFanOutTests {
        typealias Node = ClusterPresenceTests.Node

        static let names = ["alice", "bob", "carol", "dave", "erin"]

        /// Registers the five accounts on `node` and makes alice friends with each of the others.
        static func seed(_ node: Node) throws {
            var clients: [WebSocketClient] = []
            for (index, name) in names.enumerated() {
                let (client, id) = try registerMember(port: node.port, name)
                #expect(id == index + 1)
                clients.append(client)
            }
            for id in 2...5 {
                _ = try clients[0].requestOK("friend.request", ["user": id])
                _ = try clients[id - 1].requestOK("friend.accept", ["user": 1])
            }
            for client in clients { client.close() }
        }

        /// Two nodes, seeded; alice shares approximately with carol and hides from dave (set on node a).
        static func cluster(_ redis: RedisServerProcess) throws -> (a: Node, b: Node) {
            let a = try Node("a", redis: redis)
            let b = try Node("b", redis: redis)
            try seed(a)
            try seed(b)
            let alice = try a.login("alice")
            _ = try alice.requestOK("share.set", ["user": 3, "level": "approximate"])
            _ = try alice.requestOK("share.set", ["user": 4, "level": "hidden"])
            alice.close()
            return (a, b)
        }

        static func watcher(_ node: Node, _ name: String) throws -> WebSocketClient {
            let client = try node.login(name)
            _ = try client.requestOK("friends.watch")
            return client
        }

        /// True when `alice` (on node a) sees `friend` online, i.e. node a's presence mirror has them elsewhere.
        static func seesOnline(_ alice: WebSocketClient, _ friend: Int) -> Bool {
            (try? ClusterPresenceTests.listsOnline(alice, friend)) == true
        }

        /// The next `pos` of alice's within `seconds`, skipping other events (nil when none came).
        static func nextPosition(_ client: WebSocketClient, within seconds: Double) throws -> [String: Any]? {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                guard let object = try client.pollObject(within: deadline.timeIntervalSinceNow) else { return nil }
                if object["ev"] as? String == "pos", object["user"] as? Int == 1 { return object }
            }
            return nil
        }

        static func counter(_ node: Node, _ name: String) throws -> Int {
            let line = try node.metrics().split(separator: "\n").first { $0.hasPrefix(name + " ") }
            return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? -1
        }

        @Test func aMoveOnNodeAReachesFriendsOnNodeBAtTheirLevel() throws {
            let redis = try RedisServerProcess()
            let (a, b) = try Self.cluster(redis)
            let bob = try Self.watcher(b, "bob")
            let carol = try Self.watcher(b, "carol")
            let dave = try Self.watcher(b, "dave")
            let alice = try a.login("alice")
            #expect(ClusterPresenceTests.eventually { Self.seesOnline(alice, 2) && Self.seesOnline(alice, 3) })

            _ = try alice.requestOK("pos", ["lat": 48.85661, "lon": 2.35222, "acc": 7])
            let precise = try #require(try Self.nextPosition(bob, within: 5))
            #expect(precise["lat"] as? Double == 48.85661 && precise["lon"] as? Double == 2.35222)
            #expect(precise["acc"] as? Double == 7 && precise["approx"] == nil)
            let approximate = try #require(try Self.nextPosition(carol, within: 5))
            #expect(approximate["approx"] as? Bool == true && approximate["acc"] == nil)
            let lat = try #require(approximate["lat"] as? Double)
            let lon = try #require(approximate["lon"] as? Double)
            #expect(lat != 48.85661 || lon != 2.35222)
            #expect(abs(lat - 48.85661) < 0.05 && abs(lon - 2.35222) < 0.05)  // the cell's centre, 2 km cells
            #expect(try Self.nextPosition(dave, within: 1.5) == nil, "hidden: nothing at all")
            #expect(try Self.counter(a, "cairn_cluster_messages_published_total") >= 1)
            #expect(try Self.counter(b, "cairn_cluster_messages_received_total") >= 1)
            #expect(try Self.counter(b, "cairn_cluster_messages_dropped_total") == 0)

            // A hide made on node a reaches bob on node b, and her moves stop there.
            _ = try alice.requestOK("share.set", ["user": 2, "level": "hidden"])
            let hidden = try bob.nextEvent("pos.hidden", timeout: 5)
            #expect(hidden["user"] as? Int == 1)
            _ = try alice.requestOK("pos", ["lat": 48.86, "lon": 2.36])
            #expect(try Self.nextPosition(bob, within: 1.5) == nil)
            #expect(try Self.nextPosition(dave, within: 0.2) == nil)
        }

        @Test func aFriendConnectingOnNodeBAfterTheMoveGetsIt() throws {
            let redis = try RedisServerProcess()
            let (a, b) = try Self.cluster(redis)
            let alice = try a.login("alice")
            _ = try alice.requestOK("pos", ["lat": 52.52, "lon": 13.405])
            let bob = try b.login("bob")
            usleep(300_000)  // the owner's node answers bob's arrival; node b keeps it until he watches
            let reply = try bob.requestOK("friends.watch")
            #expect((reply["positions"] as? [[String: Any]])?.isEmpty == true, "node b has no fix of alice")
            // Node b announces bob only once Redis confirmed its SUBSCRIBE to alice's channel, so node a's answer
            // cannot reach Redis before the subscription (docs/ARCHITECTURE.md, "Snapshot for a viewer...").
            let position = try #require(try Self.nextPosition(bob, within: 5))
            #expect(position["lat"] as? Double == 52.52 && position["lon"] as? Double == 13.405)
            // Dave connects and watches too: hidden, so nothing is sent for him.
            let dave = try Self.watcher(b, "dave")
            #expect(try Self.nextPosition(dave, within: 1.5) == nil)
        }

        @Test func redisAwayKeepsLocalFanOutAndCrossNodeResumes() throws {
            let redis = try RedisServerProcess()
            let (a, b) = try Self.cluster(redis)
            let bob = try Self.watcher(b, "bob")
            let erin = try Self.watcher(a, "erin")  // on alice's own node
            let alice = try a.login("alice")
            #expect(ClusterPresenceTests.eventually { Self.seesOnline(alice, 2) })

            redis.kill()
            #expect(try ClusterPresenceTests.eventually { try a.health().body["cluster"] as? String == "degraded" })
            _ = try alice.requestOK("pos", ["lat": 40.0, "lon": -3.7])
            let local = try #require(try Self.nextPosition(erin, within: 5))
            #expect(local["lat"] as? Double == 40.0)
            #expect(try Self.nextPosition(bob, within: 1) == nil)

            try redis.restart()
            #expect(ClusterPresenceTests.eventually(15) { Self.seesOnline(alice, 2) })
            // Moves until one reaches bob: node b subscribes again after its reconnect, node a lists him again (and,
            // hearing him arrive again, sends him where alice is: the fix made while Redis was away may come first).
            var reached: [String: Any]?
            for step in 1...30 where reached == nil {
                _ = try alice.requestOK("pos", ["lat": 40.0 + Double(step) * 0.001, "lon": -3.7])
                reached = try Self.nextPosition(bob, within: 0.5)
            }
            #expect((try #require(reached)["lat"] as? Double ?? 0) >= 40.0)
            _ = try alice.requestOK("pos", ["lat": 41.0, "lon": -3.7])
            var latest: Double?
            while latest != 41.0, let next = try Self.nextPosition(bob, within: 5) { latest = next["lat"] as? Double }
            #expect(latest == 41.0, "moves cross nodes again")
            #expect(a.process.isRunning && b.process.isRunning)
        }
    }
}
