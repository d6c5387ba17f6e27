// User-addressed news across nodes: two real `cairn serve` processes sharing one real PostgreSQL database and one
// real redis-server. Alice is connected to node a, bob only to node b. A chat message alice sends through a reaches
// bob on b (`chat.msg`); alice sharing her Gear bucket through a tells bob on b (`bucket.changed`), and bob, who was
// already watching items on b before the share, from then on gets the Bike's `item.pos` when its tracker reports to
// node a (b read again which items bob follows); unsharing tells him on b (`bucket.removed`). A picture alice posts
// through node a reaches bob watching the area on node b (`picture.new`), and not carol, watching there from afar.
// Bob connected to both nodes gets each piece of news once on each connection, an unfriend's `bucket.removed` too
// (only the node that committed it tells). Left behind: alice turns her Bike's alert on through node a and reports
// her position to node b; the Bike's tracker reports to node a, far from her; node b, which follows the Bike for her,
// judges it and tells her there, and her connection on a hears it once too.
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite(
        .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed"),
        .enabled(if: PostgresServerProcess.isAvailable, "PostgreSQL is not installed"))
    struct ClusterNewsTests {
        typealias Node = ControlChannelTests.Node

        /// Two nodes, a and b, on a fresh shared database and one Redis (kept alive with them), with `arguments`.
        static func twoNodes(_ arguments: [String] = []) throws -> (redis: RedisServerProcess, a: Node, b: Node) {
            let url = try PostgresServerProcess.freshURL()
            let redis = try RedisServerProcess()
            return (
                redis, try Node("a", url: url, redis: redis, arguments: arguments),
                try Node("b", url: url, redis: redis, arguments: arguments)
            )
        }

        /// `requester` asks `accepter` to be friends, and `accepter` accepts.
        static func befriend(_ requester: (WebSocketClient, Int), _ accepter: (WebSocketClient, Int)) throws {
            _ = try requester.0.requestOK("friend.request", ["user": accepter.1])
            _ = try accepter.0.requestOK("friend.accept", ["user": requester.1])
        }

        @Test func chatAndBucketNewsReachAUserOnAnotherNodeAndASharedItemIsFollowedThere() throws {
            let nodes = try Self.twoNodes()
            let (a, b) = (nodes.a, nodes.b)
            let (alice, aliceID) = try registerMember(port: a.port, "alice")
            let (bob, bobID) = try registerMember(port: a.port, "bob")
            try Self.befriend((alice, aliceID), (bob, bobID))
            bob.close()
            let (bucketID, itemID, key) = try ClusterItemsTests.gearWithTrackedBike(alice, device: "bike-78")

            let bobOnB = try b.login("bob")
            let watched = try bobOnB.requestOK("items.watch")
            #expect((watched["positions"] as? [Any])?.isEmpty == true, "nothing shared with bob yet")
            // Node a hands news on to the nodes its presence mirror lists bob on.
            #expect(ClusterPresenceTests.eventually { ControlChannelTests.seesOnline(alice, bobID) })

            let sent = try alice.requestOK("chat.send", ["to": bobID, "text": "on my way"])
            let messageID = try #require((sent["message"] as? [String: Any])?["id"] as? Int)
            let heard = try bobOnB.nextEvent("chat.msg", timeout: 5)
            let message = try #require(heard["message"] as? [String: Any])
            #expect(message["id"] as? Int == messageID && message["text"] as? String == "on my way")
            #expect(message["from"] as? Int == aliceID)

            _ = try alice.requestOK("bucket.share", ["bucket": bucketID, "user": bobID, "role": "viewer"])
            let changed = try bobOnB.nextEvent("bucket.changed", timeout: 5)
            #expect(changed["bucket"] as? Int == bucketID)

            // The Bike reports to node a until bob, on b, hears it (b follows the Bike once it read bob's items
            // again, and its subscription is confirmed soon after).
            let start = Int(Date().timeIntervalSince1970)
            var position: [String: Any]?
            for step in 0..<10 where position == nil {
                let report = try HTTPClient.get(
                    port: a.port,
                    path: "/v1/ingest/osmand?id=bike-78&key=\(key)&lat=\(48.8 + Double(step) * 0.00001)&lon=2.3"
                        + "&timestamp=\(start + step)")
                #expect(report.status == 200)
                position = try ClusterItemsTests.nextItemPosition(bobOnB, itemID, within: 1)
            }
            #expect(position?["lon"] as? Double == 2.3, "bob on b hears the Bike shared after his items.watch")

            _ = try alice.requestOK("bucket.unshare", ["bucket": bucketID, "user": bobID])
            let removed = try bobOnB.nextEvent("bucket.removed", timeout: 5)
            #expect(removed["bucket"] as? Int == bucketID)
        }

        @Test func aPicturePostedThroughOneNodeReachesWatchersOnAnother() throws {
            let nodes = try Self.twoNodes()
            let (a, b) = (nodes.a, nodes.b)
            let alice = try WebSocketClient(port: a.port, timeout: 10)
            let registered = try alice.requestOK("register", ["username": "alice", "password": "password1"])
            let token = try #require(registered["token"] as? String)
            _ = try alice.requestOK("pos", ["lat": 48.85, "lon": 2.35])
            let upload = try HTTPClient.post(
                port: a.port, path: "/v1/media", body: [0xFF, 0xD8, 0xFF, 0xE0] + Array("a photo".utf8),
                contentType: "image/jpeg", headers: ["Authorization": "Bearer \(token)"], timeout: 20)
            #expect(upload.status == 201)
            let media = try #require(try upload.jsonObject()["media"] as? String)
            _ = try registerMember(port: a.port, "bob")
            _ = try registerMember(port: a.port, "carol")
            let bob = try b.login("bob")
            _ = try bob.requestOK("pos", ["lat": 48.851, "lon": 2.35])  // about 110 m away
            _ = try bob.requestOK("pictures.watch", ["radius": 1_000])
            let carol = try b.login("carol")
            _ = try carol.requestOK("pos", ["lat": 48.9, "lon": 2.35])  // about 5.5 km away
            _ = try carol.requestOK("pictures.watch", ["radius": 1_000])

            let posted = try alice.requestOK("picture.post", ["media": media, "caption": "across"])
            let id = try #require((posted["picture"] as? [String: Any])?["id"] as? Int)
            let heard = try bob.nextEvent("picture.new", timeout: 5)
            let picture = try #require(heard["picture"] as? [String: Any])
            #expect(picture["id"] as? Int == id && picture["caption"] as? String == "across")
            #expect(try carol.pollObject(within: 1) == nil, "out of carol's radius: nothing")
        }

        /// Every event arriving on `client` within `seconds`, by name.
        static func eventCounts(_ client: WebSocketClient, within seconds: Double) throws -> [String: Int] {
            var counts: [String: Int] = [:]
            let deadline = Date().addingTimeInterval(seconds)
            while let object = try client.pollObject(within: max(0, deadline.timeIntervalSinceNow)) {
                if let name = object["ev"] as? String { counts[name, default: 0] += 1 }
            }
            return counts
        }

        @Test func aUserOnTwoNodesGetsEachPieceOfNewsOnceOnEachConnection() throws {
            let nodes = try Self.twoNodes()
            let (a, b) = (nodes.a, nodes.b)
            let (alice, aliceID) = try registerMember(port: a.port, "alice")
            let (bobOnA, bobID) = try registerMember(port: a.port, "bob")
            try Self.befriend((alice, aliceID), (bobOnA, bobID))
            let bobOnB = try b.login("bob")
            // Node a hands news on to b once its presence mirror lists bob there: a message a second until b has one.
            var reached = false
            for _ in 0..<10 where !reached {
                _ = try alice.requestOK("chat.send", ["to": bobID, "text": "are you there?"])
                reached = (try? bobOnB.nextEvent("chat.msg", timeout: 1)) != nil
            }
            #expect(reached)
            _ = try Self.eventCounts(bobOnA, within: 0.5)
            _ = try Self.eventCounts(bobOnB, within: 0.5)

            _ = try alice.requestOK("bucket.create", ["name": "Trips", "privacy": "friends"])
            _ = try alice.requestOK("chat.send", ["to": bobID, "text": "hello"])
            _ = try alice.requestOK("friend.remove", ["user": bobID])
            for (name, bob) in [("a", bobOnA), ("b", bobOnB)] {
                let counts = try Self.eventCounts(bob, within: 2)
                #expect(counts["chat.msg"] == 1, "bob on \(name): \(counts)")
                #expect(counts["bucket.changed"] == 1, "bob on \(name): \(counts)")
                #expect(counts["bucket.removed"] == 1, "bob on \(name): \(counts)")
                #expect(counts["friend.removed"] == 1, "bob on \(name): \(counts)")
            }
        }

        @Test func anItemReportingToOneNodeIsJudgedLeftBehindWhereItsOwnerReports() throws {
            let nodes = try Self.twoNodes(["--left-behind-grace", "0"])
            let (a, b) = (nodes.a, nodes.b)
            let (aliceOnA, _) = try registerMember(port: a.port, "alice")
            let (_, itemID, key) = try ClusterItemsTests.gearWithTrackedBike(aliceOnA, device: "bike-79")
            _ = try aliceOnA.requestOK("item.update", ["item": itemID, "alert": true])  // b hears it (kind 12)

            // Alice reports where she is to node b (a second fix confirms the first).
            let aliceOnB = try b.login("alice")
            _ = try aliceOnB.requestOK("pos", ["lat": 48.8, "lon": 2.3, "acc": 5])
            Thread.sleep(forTimeInterval: 1)
            _ = try aliceOnB.requestOK("pos", ["lat": 48.8, "lon": 2.3, "acc": 5])

            // The Bike reports to node a, 1.1 km north of her, until node b (following it for her) has judged it.
            let start = Int(Date().timeIntervalSince1970)
            var alert: [String: Any]?
            for step in 0..<10 where alert == nil {
                let report = try HTTPClient.get(
                    port: a.port,
                    path: "/v1/ingest/osmand?id=bike-79&key=\(key)&lat=48.81&lon=2.3&accuracy=5"
                        + "&timestamp=\(start + step)")
                #expect(report.status == 200)
                alert = try? aliceOnB.nextEvent("item.left_behind", timeout: 1)
            }
            let judged = try #require(alert, "node b judged the Bike left behind")
            #expect(judged["item"] as? Int == itemID)
            #expect((judged["distance"] as? Double ?? 0) > 1000)
            let heardOnA = try aliceOnA.nextEvent("item.left_behind", timeout: 5)
            #expect(heardOnA["item"] as? Int == itemID)
            #expect(try Self.eventCounts(aliceOnA, within: 1.5)["item.left_behind"] == nil, "once")
        }
    }
}
