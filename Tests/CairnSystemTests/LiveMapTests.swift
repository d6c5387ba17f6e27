// The live friend map over real sockets with several clients: friends receive moves, strangers never do, privacy
// levels hold on the wire, a slow watcher neither delays others nor piles up memory, presence follows
// connections, removal stops pushes, and positions and friendships survive restarts and kill -9.
import CairnApp
import CairnCore
import CairnServer
import CairnTestSupport
import Foundation
import Glibc
import Testing

extension ServerIntegration {
    @Suite struct LiveMapTests {
        @Test func friendReceivesAMove() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let bob = try hub.member("bob")
            try hub.befriend(alice, bob)
            let watch = try bob.0.requestOK("friends.watch")
            #expect((watch["positions"] as? [Any])?.isEmpty == true)
            try alice.0.send(["op": "pos", "lat": 48.8566, "lon": 2.3522, "acc": 8])
            let pos = try bob.0.nextEvent("pos")
            #expect(pos["user"] as? Int == alice.1)
            #expect(pos["lat"] as? Double == 48.8566)
            #expect(pos["lon"] as? Double == 2.3522)
            #expect(pos["acc"] as? Double == 8)
            #expect(pos["ts"] is Int)
        }

        @Test func nonFriendNeverReceivesAnything() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let bob = try hub.member("bob")
            let eve = try hub.member("eve")
            try hub.befriend(alice, bob)
            _ = try bob.0.requestOK("friends.watch")
            _ = try eve.0.requestOK("friends.watch")
            for i in 0..<20 { try alice.0.send(["op": "pos", "lat": 10 + Double(i) * 0.001, "lon": 10]) }
            _ = try bob.0.nextEvent("pos")
            // Eve is told nothing at all: not a position, not presence.
            #expect(try eve.0.pollObject(within: 0.5) == nil)
        }

        @Test func approximateIsCoarseAndStable() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let bob = try hub.member("bob")
            try hub.befriend(alice, bob)
            _ = try alice.0.requestOK("share.set", ["user": bob.1, "level": "approximate"])
            _ = try bob.0.requestOK("friends.watch")
            _ = try alice.0.requestOK("pos", ["lat": 51.50072, "lon": -0.12462, "acc": 4])
            let first = try bob.0.nextEvent("pos")
            #expect(first["approx"] as? Bool == true)
            #expect(first["acc"] == nil)
            let lat = try #require(first["lat"] as? Double)
            let lon = try #require(first["lon"] as? Double)
            #expect(lat != 51.50072 && lon != -0.12462)
            #expect(abs(lat - 51.50072) < 0.015 && abs(lon + 0.12462) < 0.03)
            // Wandering inside the cell reveals nothing: no event at all.
            _ = try alice.0.requestOK("pos", ["lat": 51.50082, "lon": -0.12452])
            _ = try alice.0.requestOK("pos", ["lat": 51.50062, "lon": -0.12472])
            #expect(try bob.0.pollObject(within: 0.5) == nil)
            // And a fresh watch lists the same centre.
            let listed = try #require((try bob.0.requestOK("friends.watch")["positions"] as? [[String: Any]])?.first)
            #expect(listed["lat"] as? Double == lat && listed["lon"] as? Double == lon)
        }

        @Test func hiddenAndPausedPushNoCoordinatesAndResumePushesAgain() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let bob = try hub.member("bob")
            let carol = try hub.member("carol")
            try hub.befriend(alice, bob)
            try hub.befriend(alice, carol)
            _ = try bob.0.requestOK("friends.watch")
            _ = try carol.0.requestOK("friends.watch")
            _ = try alice.0.requestOK("share.set", ["user": bob.1, "level": "hidden"])
            _ = try alice.0.requestOK("pos", ["lat": 40.0, "lon": -74.0])
            #expect(try carol.0.nextEvent("pos")["lat"] as? Double == 40.0)
            var seen: [[String: Any]] = []
            while let o = try bob.0.pollObject(within: 0.5) { seen.append(o) }
            #expect(seen.allSatisfy { $0["lat"] == nil && $0["lon"] == nil }, "bob saw \(seen)")

            _ = try alice.0.requestOK("share.pause")
            let hiddenEvent = try carol.0.nextEvent("pos.hidden")
            #expect(hiddenEvent["user"] as? Int == alice.1 && hiddenEvent["lat"] == nil)
            _ = try alice.0.requestOK("pos", ["lat": 41.0, "lon": -73.0])
            // Carol hears alice go offline (a paused user appears offline), and nothing of where she is.
            var carolSaw: [[String: Any]] = []
            while let o = try carol.0.pollObject(within: 0.5) { carolSaw.append(o) }
            #expect(
                carolSaw.allSatisfy { $0["ev"] as? String == "presence" && $0["online"] as? Bool == false },
                "carol saw \(carolSaw)")
            #expect(try bob.0.pollObject(within: 0.2) == nil)

            _ = try alice.0.requestOK("share.resume")
            #expect(try carol.0.nextEvent("pos")["lat"] as? Double == 41.0)
            #expect(try bob.0.pollObject(within: 0.3) == nil)  // still hidden for bob alone
        }

        @Test func slowWatcherDoesNotDelayOthersNorPileUpMemory() throws {
            let hub = try RunningHub { $0.hub.messagesPerSecond = 0 }  // a deliberate burst: no per-connection limit
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let slow = try hub.member("slow", receiveBufferSize: 2048)
            let fast = try hub.member("fast")
            try hub.befriend(alice, slow)
            try hub.befriend(alice, fast)
            _ = try slow.0.requestOK("friends.watch")
            _ = try fast.0.requestOK("friends.watch")
            // The slow client stops reading; alice sends a long burst.
            let count = 20_000
            var batch: [[String: Any]] = []
            for i in 1...count {
                batch.append([
                    "op": "pos", "lat": 10 + Double(i) * 1e-6, "lon": 20, "acc": 3, "spd": 1.5, "hdg": 90, "bat": 80,
                ])
                if batch.count == 200 {
                    try alice.0.sendLines(batch)
                    batch.removeAll()
                }
            }
            let last = 10 + Double(count) * 1e-6
            _ = try alice.0.requestOK("whoami")  // all positions before it have been handled
            var latest = 0.0
            while latest != last {
                latest = try fast.0.nextEvent("pos", timeout: 10)["lat"] as? Double ?? 0
            }
            let health = try hub.health()
            let pending = try #require(health["pending_bytes"] as? Int)
            #expect(pending < 16 * 1024, "server holds \(pending) bytes for its clients")
            #expect(health["connections"] as? Int == 3)
            // Once the slow client reads again, it gets the latest position, not a backlog of 20,000.
            var slowLatest = 0.0
            var slowCount = 0
            while slowLatest != last {
                slowLatest = try slow.0.nextEvent("pos", timeout: 10)["lat"] as? Double ?? 0
                slowCount += 1
            }
            #expect(slowCount < count / 2, "slow watcher received \(slowCount) of \(count) positions")
        }

        @Test func presenceGoesOfflineOnDisconnect() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let bob = try hub.member("bob")
            try hub.befriend(alice, bob)
            alice.0.disconnectAbruptly()
            let event = try bob.0.nextEvent("presence")
            #expect(event["user"] as? Int == alice.1)
            #expect(event["online"] as? Bool == false)
            let list = try bob.0.requestOK("friend.list")
            #expect((list["friends"] as? [[String: Any]])?.first?["online"] as? Bool == false)
        }

        @Test func presenceGoesOfflineWhenAClientStopsAnsweringPings() throws {
            let hub = try RunningHub {
                $0.server.pingIntervalSeconds = 1
                $0.server.idleTimeoutSeconds = 3
            }
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let bob = try hub.member("bob")
            try hub.befriend(alice, bob)
            // Alice goes silent: her client never reads again, so it never answers a ping. Bob keeps reading
            // (his client answers pings while it waits), so only Alice is dropped.
            let event = try bob.0.nextEvent("presence", timeout: 15)
            #expect(event["user"] as? Int == alice.1)
            #expect(event["online"] as? Bool == false)
            #expect(try hub.health()["connections"] as? Int == 1)
        }

        @Test func afterFriendRemoveNothingIsPushed() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let bob = try hub.member("bob")
            try hub.befriend(alice, bob)
            _ = try bob.0.requestOK("friends.watch")
            _ = try alice.0.requestOK("pos", ["lat": 1.0, "lon": 1.0])
            _ = try bob.0.nextEvent("pos")
            _ = try alice.0.requestOK("friend.remove", ["user": bob.1])
            #expect(try bob.0.nextEvent("friend.removed")["user"] is [String: Any])
            _ = try alice.0.requestOK("pos", ["lat": 2.0, "lon": 2.0])
            #expect(try bob.0.pollObject(within: 0.5) == nil)
            let watch = try bob.0.requestOK("friends.watch")
            #expect((watch["positions"] as? [Any])?.isEmpty == true)
        }

        @Test func restartRestoresLastPositions() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let bob = try hub.member("bob")
            try hub.befriend(alice, bob)
            // A minute old: recent enough for friends.watch (positions older than a day are left out).
            let ts = Int(Date().timeIntervalSince1970 * 1000) - 60_000
            _ = try alice.0.requestOK("pos", ["lat": 35.6762, "lon": 139.6503, "ts": ts])
            alice.0.close()
            bob.0.close()
            try hub.stop()  // graceful: the final snapshot is written
            let again = try RunningHub(dataDirectory: hub.dataDirectory)
            let c = try again.client()
            _ = try c.requestOK("login", ["username": "bob", "password": "password1"])
            let positions = try #require(try c.requestOK("friends.watch")["positions"] as? [[String: Any]])
            #expect(positions.count == 1)
            #expect(positions.first?["lat"] as? Double == 35.6762)
            #expect(positions.first?["ts"] as? Int == ts)
            try again.stop()
        }

        @Test func kill9KeepsFriendshipsAndSettings() throws {
            let data = NSTemporaryDirectory() + "cairn-k9-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: data) }
            var (server, port) = try startServeProcess(data: data)
            let alice = try registerMember(port: port, "alice")
            let bob = try registerMember(port: port, "bob")
            _ = try alice.0.requestOK("friend.request", ["user": bob.1])
            _ = try bob.0.requestOK("friend.accept", ["user": alice.1])
            _ = try alice.0.requestOK("share.set", ["user": bob.1, "level": "hidden"])
            server.kill()
            _ = try server.waitForExit(timeout: 15)
            (server, port) = try startServeProcess(data: data)
            let a = try WebSocketClient(port: port, timeout: 10)
            _ = try a.requestOK("login", ["username": "alice", "password": "password1"])
            let friends = try #require(try a.requestOK("friend.list")["friends"] as? [[String: Any]])
            #expect(friends.map { $0["id"] as? Int } == [bob.1])
            let b = try WebSocketClient(port: port, timeout: 10)
            _ = try b.requestOK("login", ["username": "bob", "password": "password1"])
            _ = try b.requestOK("friends.watch")
            _ = try a.requestOK("pos", ["lat": 5.0, "lon": 5.0])
            var seen: [[String: Any]] = []
            while let o = try b.pollObject(within: 0.5) { seen.append(o) }
            #expect(seen.allSatisfy { $0["lat"] == nil }, "the hidden setting survived kill -9: \(seen)")
            server.signal(SIGTERM)
            #expect(try server.waitForExit(timeout: 15) == 0)
        }
    }
}
