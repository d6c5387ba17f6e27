// Item positions across nodes: two real `cairn serve` processes sharing one real PostgreSQL database and one real
// redis-server. Alice's Gear bucket, with the Bike in it, is shared with bob; carol is alice's friend too but not a
// member. The Bike's tracker reports through OsmAnd's HTTP ingest on node a; bob, watching items on node b, gets
// `item.pos` (privacy decided on node a from the shared store: only the item's audience is listed), carol, watching
// on b too, gets nothing; and a connection of bob's that starts watching on b afterwards is answered the Bike's
// position from b's memory.
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite(
        .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed"),
        .enabled(if: PostgresServerProcess.isAvailable, "PostgreSQL is not installed"))
    struct ClusterItemsTests {
        typealias Node = ControlChannelTests.Node

        /// The next `item.pos` for `item` within `seconds`, skipping other events (nil when none came).
        static func nextItemPosition(_ client: WebSocketClient, _ item: Int, within seconds: Double) throws
            -> [String: Any]?
        {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                guard let object = try client.pollObject(within: deadline.timeIntervalSinceNow) else { return nil }
                if object["ev"] as? String == "item.pos", object["item"] as? Int == item { return object }
            }
            return nil
        }

        /// Alice's Gear bucket with the Bike in it, its tracker (`device`) paired and active: the ids and the key.
        static func gearWithTrackedBike(_ alice: WebSocketClient, device: String, share: Int? = nil) throws
            -> (bucket: Int, item: Int, key: String)
        {
            let bucket = try alice.requestOK("bucket.create", ["name": "Gear"])
            let bucketID = try #require((bucket["bucket"] as? [String: Any])?["id"] as? Int)
            if let share {
                _ = try alice.requestOK("bucket.share", ["bucket": bucketID, "user": share, "role": "viewer"])
            }
            let item = try alice.requestOK("item.create", ["bucket": bucketID, "name": "Bike"])
            let itemID = try #require((item["item"] as? [String: Any])?["id"] as? Int)
            let pair = try alice.requestOK("tracker.pair", ["item": itemID, "device": device])
            let tracker = try #require(pair["tracker"] as? [String: Any])
            _ = try alice.requestOK("tracker.activate", ["tracker": try #require(tracker["id"] as? Int)])
            return (bucketID, itemID, try #require(tracker["key"] as? String))
        }

        @Test func aMoveReportedToNodeAReachesBucketMembersWatchingOnNodeBOnly() throws {
            let url = try PostgresServerProcess.freshURL()
            let redis = try RedisServerProcess()
            let a = try Node("a", url: url, redis: redis)
            let b = try Node("b", url: url, redis: redis)
            let (alice, aliceID) = try registerMember(port: a.port, "alice")
            let (bob, bobID) = try registerMember(port: a.port, "bob")
            let (carol, carolID) = try registerMember(port: a.port, "carol")
            for (friend, id) in [(bob, bobID), (carol, carolID)] {
                _ = try alice.requestOK("friend.request", ["user": id])
                _ = try friend.requestOK("friend.accept", ["user": aliceID])
                friend.close()
            }
            let (_, itemID, key) = try Self.gearWithTrackedBike(alice, device: "bike-77", share: bobID)

            let bobOnB = try b.login("bob")
            let bobWatch = try bobOnB.requestOK("items.watch")
            #expect((bobWatch["positions"] as? [Any])?.isEmpty == true, "the Bike has not reported yet")
            let carolOnB = try b.login("carol")
            _ = try carolOnB.requestOK("items.watch")
            // Node a lists audience members online elsewhere: wait until its presence mirror has bob and carol.
            #expect(
                ClusterPresenceTests.eventually {
                    ControlChannelTests.seesOnline(alice, bobID) && ControlChannelTests.seesOnline(alice, carolID)
                })

            // The Bike reports to node a (again, a second later and a metre further, until bob hears it: node b's
            // subscription to the Bike's channel is confirmed by then at the latest).
            let start = Int(Date().timeIntervalSince1970)
            var heard: [String: Any]?
            var lat = 48.8
            for step in 0..<10 where heard == nil {
                lat = 48.8 + Double(step) * 0.00001
                let report = try HTTPClient.get(
                    port: a.port,
                    path: "/v1/ingest/osmand?id=bike-77&key=\(key)&lat=\(lat)&lon=2.3&accuracy=5&batt=70"
                        + "&timestamp=\(start + step)")
                #expect(report.status == 200)
                heard = try Self.nextItemPosition(bobOnB, itemID, within: 1)
            }
            let position = try #require(heard)
            let heardLat = try #require(position["lat"] as? Double)
            #expect(heardLat >= 48.8 && heardLat <= lat && position["lon"] as? Double == 2.3)
            #expect(position["acc"] as? Double == 5 && position["bat"] as? Double == 70)
            #expect(try Self.nextItemPosition(carolOnB, itemID, within: 1.5) == nil, "not a member: nothing")

            // Node b's memory has the Bike where it was last heard: a new watcher there is answered it.
            let bobAgain = try b.login("bob")
            let answer = try bobAgain.requestOK("items.watch")
            let positions = try #require(answer["positions"] as? [[String: Any]])
            #expect(positions.count == 1)
            #expect(positions.first?["item"] as? Int == itemID && positions.first?["lat"] as? Double == lat)
            let carolWatch = try b.login("carol").requestOK("items.watch")
            #expect((carolWatch["positions"] as? [Any])?.isEmpty == true)
        }
    }
}
