// Partition drills: one node cut off while the others keep Redis and the store. Three real `cairn serve` nodes on one
// real PostgreSQL database and one real redis-server; nodes a and b connect directly, node c reaches Redis and
// PostgreSQL through `TCPForwarder`s the test cuts and restores (the other tests kill Redis for every node at once).
//
// Redis cut from c alone: c keeps delivering its own users' moves (it reads the store every second, which keeps its
// fence moving), and a hide made through node a reaches c through the store (bob on c hears `pos.hidden`; alice's
// moves on c stop reaching him). Node a does not answer the hide as if every node had applied it: c cannot
// acknowledge, so a answers only once c's presence entry has expired (it was written at c's last refresh and lives
// three refresh periods) and the 2 s grace beyond it has passed, with `ok` (well before the give-up time, which
// would be `internal`). Given back its Redis, c reconnects and cross-node delivery resumes.
//
// A silent cut of c's Redis (no FIN: bytes dropped, connections left open): c notices only by its heartbeats, within
// 8 s, and then reads the store at once; a hide through a made at the cut is answered only after c's presence entry
// expired, and by then c has applied it (alice's move on c right after the answer does not reach bob). With the
// heartbeats unable to notice, a still answers `ok` after the expiry and c then leaks: this drill is what checks
// the margin "Why a node cut off from Redis cannot leak for long" argues.
//
// Redis and the store cut from c (the fence): c cannot learn of any change, so within `cluster.ack_timeout` of its
// last good read it stops delivering positions, even between two users connected to it, and stays up; given both
// back, it delivers again at the owner's next move.
//
// Timings use `cluster.presence_refresh` 4 s (the least that keeps the margin the design counts on; below it a node
// warns) and `cluster.ack_timeout` 2 s (the default). Every wait for an outcome is a deadline polled for, never a
// sleep (moves are paced at ten a second at most, only to stay under the connection's request rate).
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite(
        .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed"),
        .enabled(if: PostgresServerProcess.isAvailable, "PostgreSQL is not installed"))
    struct PartitionDrillTests {
        static let presenceRefreshSeconds = 4.0
        static let ackTimeoutSeconds = 2.0
        /// A node's presence entry lives three refresh periods; the writer waits 2 s past its expiry.
        static let presenceTTLSeconds = 3 * presenceRefreshSeconds
        static let expiredGraceSeconds = 2.0

        /// A node on the shared database and the shared Redis (either maybe through a forwarder).
        final class Node {
            let process: TestServerProcess
            let port: Int
            let data: String

            init(_ name: String, storageURL: String, redisURL: String) throws {
                data = NSTemporaryDirectory() + "cairn-drill-\(name)-\(UUID().uuidString)"
                process = try TestServerProcess(arguments: [
                    "serve", "--host", "127.0.0.1", "--port", "0", "--data", data, "--scrypt-cost", "10",
                    "--signups-per-address", "0", "--storage-url", storageURL, "--storage-connections", "2",
                    "--redis-url", redisURL, "--cluster-node", name, "--cluster-prefix", "drill",
                    "--cluster-presence-refresh", "\(Int(PartitionDrillTests.presenceRefreshSeconds))",
                    "--cluster-ack-timeout", "\(Int(PartitionDrillTests.ackTimeoutSeconds * 1000))",
                ])
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

            /// `/healthz`'s `cluster` ("ok", "degraded"), nil when the node does not answer 200.
            func cluster() -> String? {
                guard let response = try? HTTPClient.get(port: port, path: "/healthz"), response.status == 200 else {
                    return nil
                }
                return (try? response.jsonObject())?["cluster"] as? String
            }

            deinit {
                process.kill()
                try? FileManager.default.removeItem(atPath: data)
            }
        }

        /// Redis, c's two forwarders, the three nodes; alice, bob and carol registered, bob friends with both.
        final class Drill {
            let redis: RedisServerProcess
            /// Node c's way to Redis.
            let redisForC: TCPForwarder
            /// Node c's way to PostgreSQL.
            let storeForC: TCPForwarder
            let a: Node
            let b: Node
            let c: Node
            let alice: Int
            let bob: Int
            let carol: Int

            init() throws {
                let postgres = try PostgresServerProcess.shared.get()
                let url = try postgres.freshURL()
                redis = try RedisServerProcess()
                redisForC = try TCPForwarder(to: redis.port)
                storeForC = try TCPForwarder(to: postgres.port)
                let direct = "@127.0.0.1:\(postgres.port)/"
                let urlForC = url.replacingOccurrences(of: direct, with: "@127.0.0.1:\(storeForC.port)/")
                try #require(url.contains(direct) && urlForC != url)
                a = try Node("a", storageURL: url, redisURL: redis.url)
                b = try Node("b", storageURL: url, redisURL: redis.url)
                c = try Node("c", storageURL: urlForC, redisURL: "redis://127.0.0.1:\(redisForC.port)")
                let (aliceClient, alice) = try registerMember(port: a.port, "alice")
                let (bobClient, bob) = try registerMember(port: a.port, "bob")
                let (carolClient, carol) = try registerMember(port: a.port, "carol")
                for (client, id) in [(aliceClient, alice), (carolClient, carol)] {
                    _ = try client.requestOK("friend.request", ["user": bob])
                    _ = try bobClient.requestOK("friend.accept", ["user": id])
                }
                for client in [aliceClient, bobClient, carolClient] { client.close() }
                (self.alice, self.bob, self.carol) = (alice, bob, carol)
                // Node c really goes through the forwarders (two Redis connections, the store's pool).
                #expect(redisForC.forwardedCount >= 2, "c's Redis connections go through the forwarder")
                #expect(storeForC.forwardedCount >= 1, "c's store connections go through the forwarder")
            }
        }

        /// True when `viewer` receives `owner`'s `pos` at latitude `lat` within `seconds` (other objects are read
        /// and skipped).
        static func sees(_ viewer: WebSocketClient, _ owner: Int, at lat: Double, within seconds: Double) throws
            -> Bool
        {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                guard let object = try viewer.pollObject(within: deadline.timeIntervalSinceNow) else { return false }
                if object["ev"] as? String == "pos", object["user"] as? Int == owner, object["lat"] as? Double == lat {
                    return true
                }
            }
            return false
        }

        /// A latitude no earlier move used (each move of a test gets its own, so a late or queued one is told apart).
        final class Latitudes {
            private var next = 0
            func take() -> Double {
                next += 1
                return (45_000 + Double(next)) / 1000
            }
        }

        /// Moves `mover` (whose user is `owner`) until `viewer` receives one of those moves within `window` of it,
        /// for at most `seconds`: true when one got through.
        static func moveUntilSeen(
            _ mover: WebSocketClient, _ owner: Int, by viewer: WebSocketClient, _ latitudes: Latitudes,
            within seconds: Double, window: Double = 0.5
        ) throws -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                let lat = latitudes.take()
                _ = try mover.requestOK("pos", ["lat": lat, "lon": 4.85])
                if try sees(viewer, owner, at: lat, within: window) { return true }
            }
            return false
        }

        /// Moves `mover` until one move does *not* reach `viewer` within `window`, for at most `seconds`: the time
        /// that move was made, nil when every move got through. At most ten moves a second (under the connection's
        /// request rate).
        static func moveUntilUnseen(
            _ mover: WebSocketClient, _ owner: Int, by viewer: WebSocketClient, _ latitudes: Latitudes,
            within seconds: Double, window: Double = 0.5
        ) throws -> Date? {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                let lat = latitudes.take()
                let movedAt = Date()
                _ = try mover.requestOK("pos", ["lat": lat, "lon": 4.85])
                if try !sees(viewer, owner, at: lat, within: window) { return movedAt }
                let pause = 0.1 - Date().timeIntervalSince(movedAt)
                if pause > 0 { usleep(useconds_t(pause * 1_000_000)) }
            }
            return nil
        }

        /// Polls until `condition` holds, for at most `seconds`.
        static func eventually(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if try condition() { return true }
                usleep(50_000)
            }
            return try condition()
        }

        @Test func redisCutFromOneNodeAHideThroughAnotherReachesItByTheStoreAndIsAnsweredAfterItsPresenceExpired()
            throws
        {
            let drill = try Drill()
            let (a, c, alice, bob, carol) = (drill.a, drill.c, drill.alice, drill.bob, drill.carol)
            let latitudes = Latitudes()
            let bobOnC = try c.watcher("bob")
            let aliceOnC = try c.login("alice")
            let aliceOnA = try a.login("alice")
            let carolOnA = try a.login("carol")
            // Before the cut: a move on c reaches bob on c, and carol's move on a reaches him across nodes.
            #expect(try Self.moveUntilSeen(aliceOnC, alice, by: bobOnC, latitudes, within: 10))
            #expect(try Self.moveUntilSeen(carolOnA, carol, by: bobOnC, latitudes, within: 10))

            let cutAt = Date()
            drill.redisForC.cut()
            #expect(Self.eventually(5) { c.cluster() == "degraded" }, "c saw its link to Redis go")
            #expect(a.cluster() == "ok" && drill.b.cluster() == "ok", "a and b keep their link")
            // Cut off from Redis but not from the store, c keeps delivering between its own users.
            #expect(try Self.moveUntilSeen(aliceOnC, alice, by: bobOnC, latitudes, within: 5))

            // Alice hides from bob through her session on a, which does not answer yet (c cannot acknowledge).
            try aliceOnA.sendText(#"{"id":77,"op":"share.set","user":\#(bob),"level":"hidden"}"#)
            // c reads the hide from the store by itself: bob hears `pos.hidden`, and her moves on c stop reaching him.
            let hidden = try bobOnC.nextEvent("pos.hidden", timeout: 5)
            #expect(hidden["user"] as? Int == alice)
            let afterHide = latitudes.take()
            _ = try aliceOnC.requestOK("pos", ["lat": afterHide, "lon": 4.85])
            #expect(try !Self.sees(bobOnC, alice, at: afterHide, within: 1.5), "c still delivers a hidden owner")
            if let early = try? aliceOnA.nextReply(id: 77, timeout: 0.1) {
                Issue.record("a answered before c could apply the hide: \(early)")
                return
            }

            // a answers once c's presence entry (written at c's last refresh, at most one period before the cut, and
            // living three) has expired and the 2 s grace after it passed, and no later than a's first refresh after
            // that expiry (which drops c's users from a's mirror), 5 s more allowed for a loaded machine: with
            // `ok`, 10 to 18 s after the cut (about 15.5 s measured). The give-up time, answered with `internal`,
            // would be ack_timeout plus two lifetimes after the hide: 26 s.
            let earliest = 2 * Self.presenceRefreshSeconds + Self.expiredGraceSeconds
            let latest = Self.presenceTTLSeconds + Self.presenceRefreshSeconds + Self.expiredGraceSeconds + 5
            let reply = try aliceOnA.nextReply(id: 77, timeout: 40)
            let answeredAfter = Date().timeIntervalSince(cutAt)
            #expect(reply["ok"] as? Bool == true, "the hide was given up: \(reply)")
            #expect(answeredAfter >= earliest - 0.2, "a answered \(answeredAfter) s after the cut, before c expired")
            #expect(answeredAfter <= latest, "a answered \(answeredAfter) s after the cut")

            // c gets its Redis back: it reconnects, and carol's moves on a reach bob on c again.
            drill.redisForC.restore()
            #expect(Self.eventually(15) { c.cluster() == "ok" }, "c reconnected to Redis")
            #expect(try Self.moveUntilSeen(carolOnA, carol, by: bobOnC, latitudes, within: 20))
            // The hide holds on c after the return.
            let later = latitudes.take()
            _ = try aliceOnC.requestOK("pos", ["lat": later, "lon": 4.85])
            #expect(try !Self.sees(bobOnC, alice, at: later, within: 1))
            withExtendedLifetime(drill) {}
        }

        @Test func redisAndTheStoreCutFromOneNodeItStopsDeliveringPositionsWithinTheAckTimeoutAndStaysUp() throws {
            let drill = try Drill()
            let (c, alice) = (drill.c, drill.alice)
            let latitudes = Latitudes()
            let bobOnC = try c.watcher("bob")
            let aliceOnC = try c.login("alice")
            #expect(try Self.moveUntilSeen(aliceOnC, alice, by: bobOnC, latitudes, within: 10))

            let cutAt = Date()
            drill.storeForC.cut()
            drill.redisForC.cut()
            // The fence: within ack_timeout of c's last good read (at most the cut), alice's moves stop reaching bob,
            // though both are connected to c.
            let margin = 3.0
            let unseen = try Self.moveUntilUnseen(
                aliceOnC, alice, by: bobOnC, latitudes, within: Self.ackTimeoutSeconds + margin)
            let stopped = try #require(unseen, "c kept delivering positions with neither Redis nor the store")
            #expect(stopped.timeIntervalSince(cutAt) <= Self.ackTimeoutSeconds + margin)
            // And it stays so: no move gets through while the cut lasts.
            for _ in 0..<3 {
                let lat = latitudes.take()
                _ = try aliceOnC.requestOK("pos", ["lat": lat, "lon": 4.85])
                #expect(try !Self.sees(bobOnC, alice, at: lat, within: 0.7), "a position got through the fence")
            }
            // c stays up: it answers requests and /healthz (degraded, still 200).
            #expect(try bobOnC.requestOK("whoami")["user"] != nil)
            #expect(c.cluster() == "degraded")

            // Both given back: c reads the store again and alice's next moves reach bob.
            drill.storeForC.restore()
            drill.redisForC.restore()
            #expect(try Self.moveUntilSeen(aliceOnC, alice, by: bobOnC, latitudes, within: 20))
            #expect(Self.eventually(15) { c.cluster() == "ok" }, "c reconnected to Redis")
            withExtendedLifetime(drill) {}
        }

        @Test func aSilentCutIsNoticedByTheHeartbeatsAndAHideThroughAnotherNodeHoldsOnItBeforeItIsAnswered() throws {
            let drill = try Drill()
            let (a, c, alice, bob) = (drill.a, drill.c, drill.alice, drill.bob)
            let latitudes = Latitudes()
            let bobOnC = try c.watcher("bob")
            let aliceOnC = try c.login("alice")
            let aliceOnA = try a.login("alice")
            #expect(try Self.moveUntilSeen(aliceOnC, alice, by: bobOnC, latitudes, within: 10))

            // No FIN: c's connections to Redis stay open and carry nothing. The hide goes through a at once.
            let cutAt = Date()
            drill.redisForC.freeze()
            try aliceOnA.sendText(#"{"id":78,"op":"share.set","user":\#(bob),"level":"hidden"}"#)
            // c notices by its heartbeats (three unanswered 2 s beats, counted from the first after the cut: 8 s),
            // then reads the store at once: bob hears `pos.hidden`.
            #expect(Self.eventually(8 + 2) { c.cluster() == "degraded" }, "c never noticed the silent cut")
            let noticedAfter = Date().timeIntervalSince(cutAt)
            #expect(noticedAfter <= 8 + 2, "c noticed \(noticedAfter) s after the cut")
            let hidden = try? bobOnC.nextEvent("pos.hidden", timeout: 5)
            #expect(hidden?["user"] as? Int == alice, "c did not apply the hide after noticing")

            // a answers once c's presence entry expired (at least two refresh periods and the grace after the cut),
            // and by then c has applied the hide: alice's move on c right after the answer does not reach bob.
            let reply = try aliceOnA.nextReply(id: 78, timeout: 40)
            let answeredAfter = Date().timeIntervalSince(cutAt)
            #expect(reply["ok"] as? Bool == true, "the hide was given up: \(reply)")
            let earliest = 2 * Self.presenceRefreshSeconds + Self.expiredGraceSeconds
            #expect(answeredAfter >= earliest - 0.2, "a answered \(answeredAfter) s after the cut, before c expired")
            let afterAnswer = latitudes.take()
            _ = try aliceOnC.requestOK("pos", ["lat": afterAnswer, "lon": 4.85])
            #expect(try !Self.sees(bobOnC, alice, at: afterAnswer, within: 1.5), "c delivers a hidden owner")

            // Given its path back, c drops the connections that lost bytes, reconnects, and the hide still holds.
            drill.redisForC.restore()
            #expect(Self.eventually(15) { c.cluster() == "ok" }, "c reconnected to Redis")
            let later = latitudes.take()
            _ = try aliceOnC.requestOK("pos", ["lat": later, "lon": 4.85])
            #expect(try !Self.sees(bobOnC, alice, at: later, within: 1))
            withExtendedLifetime(drill) {}
        }
    }
}
