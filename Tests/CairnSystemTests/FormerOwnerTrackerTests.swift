// A tracker is accepted only while whoever paired it owns its item's bucket, over the real ops and the real HTTP
// ingest: Bob, a co-owner of Alice's Gear, pairs the Bike with a phone he keeps and lets it see the bucket; once Alice
// unshares him (or makes him a viewer), his phone's OwnTracks posts are refused like an inactive tracker's (403, no
// positions in the answer) and neither they nor OsmAnd or Overland reports move the Bike any more, from the moment the
// unshare is answered. Alice's own tracker keeps working, and she sees who paired each tracker (`tracker.list`).
// Ending a friendship keeps a co-owner a co-owner (docs/PROTOCOL.md, Buckets), so it keeps their tracker too; an owner
// cuts it off by unsharing them, friends or not.
import CairnApp
import CairnCore
import CairnTestSupport
import CairnTrackers
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct FormerOwnerTrackerTests {
        typealias OwnTracks = OwnTracksIngestTests
        typealias Overland = OverlandIngestTests

        /// Alice's Gear, co-owned by Bob: Keys with Alice's tag (reported once), Bike with Bob's phone (active, shown
        /// the bucket's items).
        struct Gear {
            let hub: RunningHub
            let alice: (WebSocketClient, Int)
            let bob: (WebSocketClient, Int)
            let bucket: Int
            let bike: Int
            let keys: Int
            let phone: (id: Int, key: String)
            let tag: (id: Int, key: String)

            init() throws {
                hub = try RunningHub()
                alice = try hub.member("alice")
                bob = try hub.member("bob")
                try hub.befriend(alice, bob)
                bucket = try hub.bucket(alice.0, "Gear")
                _ = try alice.0.requestOK("bucket.share", ["bucket": bucket, "user": bob.1, "role": "owner"])
                bike = try hub.item(alice.0, bucket: bucket, "Bike")
                keys = try hub.item(alice.0, bucket: bucket, "Keys")
                tag = try hub.activeTracker(alice.0, item: keys, device: "keys-tag")
                phone = try hub.activeTracker(bob.0, item: bike, device: "bob-phone")
                _ = try bob.0.requestOK("tracker.update", ["tracker": phone.id, "show_items": true])
                let now = Int(Date().timeIntervalSince1970)
                let tagged = try HTTPClient.get(
                    port: hub.port,
                    path: "/v1/ingest/osmand?id=keys-tag&key=\(tag.key)&lat=48.86&lon=2.35&timestamp=\(now - 300)")
                #expect(tagged.status == 200)
            }

            /// Bob's phone posts a location `ago` seconds old at `lat`.
            func phonePosts(lat: Double, ago: Int) throws -> HTTPResponse {
                let tst = Int(Date().timeIntervalSince1970) - ago
                return try OwnTracks.post(
                    hub, #"{"_type":"location","lat":\#(lat),"lon":2.3,"tst":\#(tst),"tid":"BB"}"#,
                    OwnTracks.basic("bob-phone", phone.key))
            }

            /// The Bike's stored latitude.
            func bikeLat() async throws -> Double? {
                try await hub.app.store.trackerFix(tracker: Int64(phone.id))?.lat
            }

            func close() {
                alice.0.close()
                bob.0.close()
                hub.removeData()
            }
        }

        /// Bob's phone is refused in every format and shown nothing, and the Bike stays where it was.
        static func expectCutOff(_ gear: Gear, lat: Double) async throws {
            let before = try await gear.bikeLat()
            let posted = try gear.phonePosts(lat: lat, ago: 30)
            #expect(posted.status == 403)
            #expect(String(decoding: posted.body, as: UTF8.self).contains("not active"))
            #expect(!String(decoding: posted.body, as: UTF8.self).contains("Keys"))
            let card = try OwnTracks.post(
                gear.hub, #"{"_type":"lwt","tst":3}"#, OwnTracks.basic("bob-phone", gear.phone.key))
            #expect(card.status == 403)
            let now = Int(Date().timeIntervalSince1970)
            let osmand = try HTTPClient.get(
                port: gear.hub.port,
                path: "/v1/ingest/osmand?id=bob-phone&key=\(gear.phone.key)&lat=\(lat)&lon=2.3&timestamp=\(now - 20)")
            #expect(osmand.status == 403)
            let overland = try Overland.post(
                gear.hub, #"{"locations":[\#(Overland.point(2.3, lat, Overland.iso(now - 10)))]}"#, key: gear.phone.key)
            #expect(overland.status == 403)
            #expect(try await gear.bikeLat() == before)
        }

        /// Bob's phone is answered with Keys and moves the Bike.
        static func expectWorking(_ gear: Gear, lat: Double, ago: Int) async throws {
            let posted = try gear.phonePosts(lat: lat, ago: ago)
            #expect(posted.status == 200)
            let shown = try #require(try JSONSerialization.jsonObject(with: Data(posted.body)) as? [[String: Any]])
            #expect(shown.first?["name"] as? String == "Keys")
            #expect(try await gear.bikeLat() == lat)
        }

        @Test func anUnsharedOwnersTrackerIsRefusedAndShownNothingOnceTheUnshareIsAnswered() async throws {
            let gear = try Gear()
            defer { gear.close() }
            try await Self.expectWorking(gear, lat: 48.85, ago: 120)
            _ = try gear.alice.0.requestOK("bucket.unshare", ["bucket": gear.bucket, "user": gear.bob.1])
            try await Self.expectCutOff(gear, lat: 48.851)

            // Alice's own tag still reports, and is answered with the Bike once she lets it see the bucket.
            _ = try gear.alice.0.requestOK("tracker.update", ["tracker": gear.tag.id, "show_items": true])
            let tst = Int(Date().timeIntervalSince1970) - 5
            let tagged = try OwnTracks.post(
                gear.hub, #"{"_type":"location","lat":48.861,"lon":2.35,"tst":\#(tst),"tid":"KK"}"#,
                OwnTracks.basic("keys-tag", gear.tag.key))
            #expect(tagged.status == 200)
            #expect(String(decoding: tagged.body, as: UTF8.self).contains("Bike"))
            #expect(try await gear.hub.app.store.trackerFix(tracker: Int64(gear.tag.id))?.lat == 48.861)

            // Alice sees who paired each tracker, and that Bob no longer owns the bucket; she unpairs his.
            let listed = try gear.alice.0.requestOK("tracker.list", ["bucket": gear.bucket])
            let trackers = try #require(listed["trackers"] as? [[String: Any]])
            #expect(trackers.map { $0["device"] as? String } == ["keys-tag", "bob-phone"])
            #expect(trackers.map { $0["paired_by"] as? Int } == [gear.alice.1, gear.bob.1])
            #expect(trackers.map { $0["pairer_left"] as? Bool } == [false, true])
            _ = try gear.alice.0.requestOK("tracker.unpair", ["tracker": gear.phone.id])
            #expect(try gear.phonePosts(lat: 48.852, ago: 1).status == 401)
        }

        @Test func anOwnerMadeAViewerLosesTheirTrackerAndGetsItBackAsOwner() async throws {
            let gear = try Gear()
            defer { gear.close() }
            _ = try gear.alice.0.requestOK(
                "bucket.share", ["bucket": gear.bucket, "user": gear.bob.1, "role": "viewer"])
            try await Self.expectCutOff(gear, lat: 48.85)
            _ = try gear.alice.0.requestOK(
                "bucket.share", ["bucket": gear.bucket, "user": gear.bob.1, "role": "owner"])
            try await Self.expectWorking(gear, lat: 48.851, ago: 60)
        }

        @Test func anUnfriendedCoOwnerKeepsTheirTrackerUntilUnshared() async throws {
            let gear = try Gear()
            defer { gear.close() }
            _ = try gear.alice.0.requestOK("friend.remove", ["user": gear.bob.1])
            _ = try gear.bob.0.nextEvent("friend.removed")
            // Still a co-owner: the bucket, and so the tracker, is still his.
            let seen = try gear.bob.0.requestOK("bucket.get", ["bucket": gear.bucket])
            #expect((seen["bucket"] as? [String: Any])?["role"] as? String == "owner")
            try await Self.expectWorking(gear, lat: 48.85, ago: 120)
            _ = try gear.alice.0.requestOK("bucket.unshare", ["bucket": gear.bucket, "user": gear.bob.1])
            try await Self.expectCutOff(gear, lat: 48.851)
        }
    }
}
