// Friendships and sharing rules across nodes: three real `cairn serve` processes sharing one real PostgreSQL
// database (`--storage-url`) and one real redis-server. Each node holds the friend graph and the rules in memory;
// the control channel brings every change committed through one node into the others' memory, and tells the users
// it concerns there: bob on c hears alice's request made on a, alice on b hears bob accept on c, and bob on c hears
// alice remove him on a. Friends made across nodes are live everywhere (alice's move on b reaches bob on c); an
// unfriend on a is answered only once the other nodes applied it, so after the reply b sends bob nothing more; a
// hide set through alice's session on b stops node a, where her positions arrive, from delivering them to bob
// before b answers. That the reply waits, not just that the outcome is right: node a started with
// `--cluster-apply-delay-ms=1500` handles each control message 1.5 s late, and a hide or an unfriend through b
// is then answered no sooner (a lower bound a slow machine only makes longer). With Redis away, a hide set through
// node a reaches node b through the shared store (b reads it every second while cut off: bob hears `pos.hidden` and
// b delivers nothing more), and a is not answered as if every node had applied it: the change waits for the link
// and is answered once sent again and acknowledged. A logout through node a closes the connection on node c that
// authenticated with the same token, and a logout everywhere closes every other one.
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite(
        .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed"),
        .enabled(if: PostgresServerProcess.isAvailable, "PostgreSQL is not installed"))
    struct ControlChannelTests {
        /// A node on the shared database and the shared Redis.
        final class Node {
            let name: String
            let process: TestServerProcess
            let port: Int
            let data: String

            /// `environment`: added to the node's own; `arguments`: to `serve`'s (an apply delay, a clock offset).
            init(
                _ name: String, url: String, redis: RedisServerProcess, environment: [String: String] = [:],
                arguments: [String] = []
            ) throws {
                self.name = name
                data = NSTemporaryDirectory() + "cairn-ctl-\(name)-\(UUID().uuidString)"
                process = try TestServerProcess(
                    arguments: [
                        "serve", "--host", "127.0.0.1", "--port", "0", "--data", data, "--scrypt-cost", "10",
                        "--signups-per-address", "0", "--storage-url", url, "--storage-connections", "2",
                        "--redis-url", redis.url, "--cluster-node", name, "--cluster-prefix", "ctl",
                        "--cluster-presence-refresh", "1",
                    ] + arguments, environment: environment)
                port = try process.waitForListeningPort(timeout: 60)
            }

            func login(_ username: String) throws -> WebSocketClient {
                let c = try WebSocketClient(port: port, timeout: 10)
                _ = try c.requestOK("login", ["username": username, "password": "password1"])
                return c
            }

            func watcher(_ username: String) throws -> WebSocketClient {
                let c = try login(username)
                _ = try c.requestOK("friends.watch")
                return c
            }

            deinit {
                process.kill()
                try? FileManager.default.removeItem(atPath: data)
            }

            /// What `nodes` printed so far, each under its name: the comment of an expectation that depends on them
            /// (evaluated only when it fails).
            static func logs(_ nodes: Node...) -> Comment {
                Comment(rawValue: nodes.map { "--- node \($0.name) ---\n\($0.process.output)" }.joined(separator: "\n"))
            }
        }

        /// The Redis, the three nodes, alice's and bob's ids.
        struct Cluster {
            let redis: RedisServerProcess
            let a: Node
            let b: Node
            let c: Node
            let alice: Int
            let bob: Int
        }

        /// Three nodes; alice and bob registered and, when `friends`, made friends through node a (both sessions
        /// closed). `delayA`: node a handles each control message that many milliseconds after it arrives.
        static func cluster(friends: Bool = true, delayA: Int? = nil) throws -> Cluster {
            let url = try PostgresServerProcess.freshURL()
            let redis = try RedisServerProcess()
            let a = try Node(
                "a", url: url, redis: redis, arguments: delayA.map { ["--cluster-apply-delay-ms=\($0)"] } ?? [])
            let b = try Node("b", url: url, redis: redis)
            let c = try Node("c", url: url, redis: redis)
            let (alice, aliceID) = try registerMember(port: a.port, "alice")
            let (bob, bobID) = try registerMember(port: a.port, "bob")
            if friends {
                _ = try alice.requestOK("friend.request", ["user": bobID])
                _ = try bob.requestOK("friend.accept", ["user": aliceID])
            }
            alice.close()
            bob.close()
            return Cluster(redis: redis, a: a, b: b, c: c, alice: aliceID, bob: bobID)
        }

        /// The next `pos` of `owner` within `seconds`, skipping other events (nil when none came).
        static func nextPosition(_ client: WebSocketClient, of owner: Int, within seconds: Double) throws
            -> [String: Any]?
        {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                guard let object = try client.pollObject(within: deadline.timeIntervalSinceNow) else { return nil }
                if object["ev"] as? String == "pos", object["user"] as? Int == owner { return object }
            }
            return nil
        }

        static func seesOnline(_ client: WebSocketClient, _ friend: Int) -> Bool {
            (try? ClusterPresenceTests.listsOnline(client, friend)) == true
        }

        @Test func friendEventsReachEveryNodeAndAnUnfriendOnAStopsBAtOnce() throws {
            let cluster = try Self.cluster(friends: false)
            let (a, b, c, alice, bob) = (cluster.a, cluster.b, cluster.c, cluster.alice, cluster.bob)
            let bobOnC = try c.watcher("bob")
            let aliceOnB = try b.login("alice")
            let aliceOnA = try a.login("alice")

            // Asked through a: bob, connected only to c, hears it from c.
            let asked = try aliceOnA.requestOK("friend.request", ["user": bob])
            #expect(asked["status"] as? String == "pending")
            let request = try bobOnC.nextEvent("friend.request", timeout: 5)
            let requester = try #require(request["user"] as? [String: Any])
            #expect(requester["id"] as? Int == alice && requester["username"] as? String == "alice")

            // Accepted through c: alice's session on b hears it from b (and her session on a from a).
            let accepted = try bobOnC.requestOK("friend.accept", ["user": alice])
            #expect(accepted["status"] as? String == "friends")
            for session in [aliceOnB, aliceOnA] {
                let event = try session.nextEvent("friend.accepted", timeout: 5)
                let accepter = try #require(event["user"] as? [String: Any])
                #expect(accepter["id"] as? Int == bob && accepter["username"] as? String == "bob")
            }

            // The friendship is live across nodes: alice's move on b reaches bob on c.
            #expect(ClusterPresenceTests.eventually { Self.seesOnline(aliceOnB, bob) })
            _ = try aliceOnB.requestOK("pos", ["lat": 48.85661, "lon": 2.35222])
            let moved = try #require(try Self.nextPosition(bobOnC, of: alice, within: 5))
            #expect(moved["lat"] as? Double == 48.85661)

            // Removed through a: bob on c hears the removal from c, and once a answers, b has stopped.
            let removed = try aliceOnA.requestOK("friend.remove", ["user": bob])
            #expect(removed["status"] as? String == "removed")
            let removal = try bobOnC.nextEvent("friend.removed", timeout: 5)
            #expect((removal["user"] as? [String: Any])?["id"] as? Int == alice)
            _ = try aliceOnB.requestOK("pos", ["lat": 48.86, "lon": 2.36])
            #expect(try Self.nextPosition(bobOnC, of: alice, within: 1.5) == nil)
            #expect(ClusterPresenceTests.eventually { (try? ClusterPresenceTests.listsOnline(aliceOnB, bob)) == nil })
            withExtendedLifetime(cluster) {}
        }

        @Test func aHideMadeWhileRedisIsAwayReachesTheOtherNodeByTheStoreAndIsAnsweredOnceRedisReturns() throws {
            let cluster = try Self.cluster()
            let (a, b, alice, bob) = (cluster.a, cluster.b, cluster.alice, cluster.bob)
            let bobOnB = try b.watcher("bob")
            let aliceOnB = try b.login("alice")
            let aliceOnA = try a.login("alice")
            _ = try aliceOnB.requestOK("pos", ["lat": 45.76, "lon": 4.84])
            #expect(try Self.nextPosition(bobOnB, of: alice, within: 5) != nil)

            cluster.redis.kill()
            for node in [a, b] {
                #expect(
                    ClusterPresenceTests.eventually {
                        let health = try? HTTPClient.get(port: node.port, path: "/healthz").jsonObject()
                        return health?["cluster"] as? String == "degraded"
                    })
            }
            // Through node a, whose link is down: committed, not answered yet.
            try aliceOnA.sendText(#"{"id":77,"op":"share.set","user":\#(bob),"level":"hidden"}"#)
            // Node b learns it from the store by itself: bob hears the hide, and b's own moves stop reaching him.
            let hidden = try bobOnB.nextEvent("pos.hidden", timeout: 10)
            #expect(hidden["user"] as? Int == alice)
            _ = try aliceOnB.requestOK("pos", ["lat": 45.77, "lon": 4.85])
            #expect(try Self.nextPosition(bobOnB, of: alice, within: 1.5) == nil)
            #expect((try? aliceOnA.nextReply(id: 77, timeout: 1)) == nil, "answered before any node could confirm")

            // Redis returns: a sends the change again, b acknowledges, a answers.
            try cluster.redis.restart()
            let reply = try aliceOnA.nextReply(id: 77, timeout: 20)
            #expect(reply["ok"] as? Bool == true)
            withExtendedLifetime(cluster) {}
        }

        @Test func aLogoutOnAClosesTheTokensConnectionsOnOtherNodesAndLogoutEverywhereClosesThemAll() throws {
            let cluster = try Self.cluster()
            let (a, b, c) = (cluster.a, cluster.b, cluster.c)
            let onA = try WebSocketClient(port: a.port, timeout: 10)
            let token = try #require(
                try onA.requestOK("login", ["username": "alice", "password": "password1"])["token"] as? String)
            let sameTokenOnC = try WebSocketClient(port: c.port, path: "/ws?token=\(token)", timeout: 10)
            _ = try sameTokenOnC.requestOK("whoami")
            let otherTokenOnB = try b.login("alice")
            _ = try onA.requestOK("logout")
            #expect(try sameTokenOnC.expectClose(timeout: 10).code == 4500, "the token's connection on c is closed")
            #expect(try otherTokenOnB.requestOK("whoami")["user"] != nil, "another token stays")

            let again = try a.login("alice")
            _ = try again.requestOK("logout", ["all": true])
            #expect(try otherTokenOnB.expectClose(timeout: 10).code == 4500, "everywhere means on b too")
            withExtendedLifetime(cluster) {}
        }

        @Test func aNewFriendOnAnotherNodeSeesWhereTheOwnerIsWithoutWaitingForAMove() throws {
            let cluster = try Self.cluster()
            let (a, b) = (cluster.a, cluster.b)
            let (carol, carolID) = try registerMember(port: a.port, "carol")
            let (dave, daveID) = try registerMember(port: a.port, "dave")
            _ = try carol.requestOK("pos", ["lat": 43.6, "lon": 1.44])
            _ = try dave.requestOK("pos", ["lat": 44.84, "lon": -0.58])
            let bobOnB = try b.watcher("bob")
            #expect(
                ClusterPresenceTests.eventually {
                    (try? ClusterPresenceTests.listsOnline(bobOnB, cluster.alice)) != nil
                })

            // Accepted on b, the viewer's node: b follows carol and asks a, where she is, for her position.
            _ = try carol.requestOK("friend.request", ["user": cluster.bob])
            #expect(
                ClusterPresenceTests.eventually { (try? bobOnB.requestOK("friend.accept", ["user": carolID])) != nil })
            let first = try #require(try Self.nextPosition(bobOnB, of: carolID, within: 5))
            #expect(first["lat"] as? Double == 43.6)

            // Accepted on a, the owner's node: b applies the friendship from the control channel and asks the same.
            _ = try bobOnB.requestOK("friend.request", ["user": daveID])
            #expect(
                ClusterPresenceTests.eventually { (try? dave.requestOK("friend.accept", ["user": cluster.bob])) != nil }
            )
            let second = try #require(try Self.nextPosition(bobOnB, of: daveID, within: 5))
            #expect(second["lat"] as? Double == 44.84)
            withExtendedLifetime(cluster) {}
        }

        @Test func aRelicLeftOnAIsNearbyOnBAndItsDeletionMakesItVanishThere() throws {
            let cluster = try Self.cluster()
            let (a, b) = (cluster.a, cluster.b)
            let aliceOnA = try a.login("alice")
            let bobOnB = try b.login("bob")
            for client in [aliceOnA, bobOnB] {
                for _ in 0..<2 { _ = try client.requestOK("pos", ["lat": 48.85, "lon": 2.35]) }
            }
            let made = try aliceOnA.requestOK("relic.create", ["text": "under the bridge", "radius": 50])
            let id = try #require((made["relic"] as? [String: Any])?["id"] as? Int)
            // Bob stands inside it on node b: it appears there, and b lists it nearby.
            let appear = try bobOnB.nextEvent("relic.appear", timeout: 5)
            #expect((appear["relic"] as? [String: Any])?["id"] as? Int == id)
            let nearby = try #require(try bobOnB.requestOK("relic.nearby")["relics"] as? [[String: Any]])
            #expect(nearby.map { $0["id"] as? Int } == [id])
            _ = try aliceOnA.requestOK("relic.delete", ["relic": id])
            let vanish = try bobOnB.nextEvent("relic.vanish", timeout: 5)
            #expect(vanish["id"] as? Int == id || (vanish["relic"] as? [String: Any])?["id"] as? Int == id)
            #expect((try bobOnB.requestOK("relic.nearby")["relics"] as? [[String: Any]])?.isEmpty == true)
            withExtendedLifetime(cluster) {}
        }

        @Test func aHideSetThroughNodeBStopsNodeAWherePositionsArrive() throws {
            let cluster = try Self.cluster()
            let (a, b, c, alice, bob) = (cluster.a, cluster.b, cluster.c, cluster.alice, cluster.bob)
            let bobOnC = try c.watcher("bob")
            let aliceOnA = try a.login("alice")
            #expect(ClusterPresenceTests.eventually { Self.seesOnline(aliceOnA, bob) })
            _ = try aliceOnA.requestOK("pos", ["lat": 52.52, "lon": 13.405])
            #expect(try Self.nextPosition(bobOnC, of: alice, within: 5) != nil)

            // Alice's second session, on node b, hides her from bob; b answers once node a applied it.
            let aliceOnB = try b.login("alice")
            #expect(ClusterPresenceTests.eventually { Self.seesOnline(aliceOnB, bob) })
            _ = try aliceOnB.requestOK("share.set", ["user": bob, "level": "hidden"])
            _ = try aliceOnA.requestOK("pos", ["lat": 52.53, "lon": 13.41])
            #expect(try Self.nextPosition(bobOnC, of: alice, within: 1.5) == nil)
            // And a reveal through b lets a deliver again.
            _ = try aliceOnB.requestOK("share.set", ["user": bob, "level": "precise"])
            #expect(
                ClusterPresenceTests.eventually(5) {
                    _ = try? aliceOnA.requestOK("pos", ["lat": 52.54, "lon": 13.42])
                    return (try? Self.nextPosition(bobOnC, of: alice, within: 0.3)) != nil
                })
            withExtendedLifetime(cluster) {}
        }

        @Test func aHideOrAnUnfriendThroughBIsAnsweredOnlyAfterTheSlowNodeAAppliedIt() throws {
            let cluster = try Self.cluster(delayA: 1500)
            let (a, b, c, alice, bob) = (cluster.a, cluster.b, cluster.c, cluster.alice, cluster.bob)
            try a.process.waitForLine(containing: "--cluster-apply-delay-ms 1500", timeout: 5)
            let bobOnC = try c.watcher("bob")
            let aliceOnA = try a.login("alice")
            let aliceOnB = try b.login("alice")
            #expect(
                ClusterPresenceTests.eventually { Self.seesOnline(aliceOnA, bob) && Self.seesOnline(aliceOnB, bob) })
            _ = try aliceOnA.requestOK("pos", ["lat": 40.4168, "lon": -3.7038])
            #expect(try Self.nextPosition(bobOnC, of: alice, within: 5) != nil)

            // Node a, where alice's positions arrive, handles the hide 1.5 s after it arrives: b cannot answer
            // before a acknowledged, and a acknowledges only once it applied it.
            let hideStarted = Date()
            _ = try aliceOnB.requestOK("share.set", ["user": bob, "level": "hidden"], timeout: 20)
            let hideTook = Date().timeIntervalSince(hideStarted)
            #expect(hideTook >= 1.4, "the hide was answered after \(hideTook) s, before node a could apply it")
            _ = try aliceOnA.requestOK("pos", ["lat": 40.42, "lon": -3.71])
            #expect(try Self.nextPosition(bobOnC, of: alice, within: 1.5) == nil)

            // An unfriend through b waits for a the same way.
            let removeStarted = Date()
            let removed = try aliceOnB.requestOK("friend.remove", ["user": bob], timeout: 20)
            let removeTook = Date().timeIntervalSince(removeStarted)
            #expect(removed["status"] as? String == "removed")
            #expect(removeTook >= 1.4, "the unfriend was answered after \(removeTook) s, before node a could apply it")
            withExtendedLifetime(cluster) {}
        }

        /// Alice is connected to a (where she moves) and to b (no fix of hers there, applying control messages 1.5 s
        /// late); bob watches on c. A reveal through a shows her next move to bob; when b applies the reveal later, it
        /// does not withdraw what c holds for bob (its withdrawal could land after a's newer position and remove it
        /// from bob's slot): a second connection of bob's on c that starts watching still gets the move.
        @Test func aNodeWithoutTheOwnersFixDoesNotWithdrawThePositionAnotherNodeShowed() throws {
            let url = try PostgresServerProcess.freshURL()
            let redis = try RedisServerProcess()
            let a = try Node("a", url: url, redis: redis)
            let b = try Node("b", url: url, redis: redis, arguments: ["--cluster-apply-delay-ms=1500"])
            let c = try Node("c", url: url, redis: redis)
            let (aliceFirst, alice) = try registerMember(port: a.port, "alice")
            let (bobFirst, bob) = try registerMember(port: a.port, "bob")
            _ = try aliceFirst.requestOK("friend.request", ["user": bob])
            _ = try bobFirst.requestOK("friend.accept", ["user": alice])
            aliceFirst.close()
            bobFirst.close()
            let bobOnC = try c.watcher("bob")
            let aliceOnA = try a.login("alice")
            let aliceOnB = try b.login("alice")
            #expect(
                ClusterPresenceTests.eventually { Self.seesOnline(aliceOnA, bob) && Self.seesOnline(aliceOnB, bob) })

            _ = try aliceOnA.requestOK("share.set", ["user": bob, "level": "hidden"])
            _ = try aliceOnA.requestOK("share.set", ["user": bob, "level": "approximate"])
            _ = try aliceOnA.requestOK("pos", ["lat": 52.52, "lon": 13.405])
            #expect(
                try ClusterClockSkewTests.position(bobOnC, of: alice, near: 52.52, within: 10) != nil,
                Node.logs(a, b, c))
            // b applies the reveal (1.5 s late, after the move); what c keeps for bob is still the move.
            #expect(
                ClusterPresenceTests.eventually {
                    (try? ClusterClockSkewTests.level(aliceOnB, for: bob)) == "approximate"
                })
            let secondTab = try c.watcher("bob")
            #expect(
                try ClusterClockSkewTests.position(secondTab, of: alice, near: 52.52, within: 5) != nil,
                Node.logs(a, b, c))
            withExtendedLifetime((a, b, c, redis, bobOnC)) {}
        }
    }
}
