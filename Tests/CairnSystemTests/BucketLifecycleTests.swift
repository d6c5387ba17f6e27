// The rest of the bucket, tracker and safe-zone ops over real sockets: a bucket listed with the caller's role,
// renamed (its viewer hears `bucket.changed`), unshared (the ex-viewer hears `bucket.removed` and is refused it), an
// item deleted, a tracker unpaired (its key refused by the ingest afterwards, its position gone from `item.locate`),
// `items.unwatch` stopping `item.pos`, safe zones added, listed and removed, and the bucket deleted.
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct BucketLifecycleTests {
        static func id(_ reply: [String: Any], _ key: String) throws -> Int {
            try #require((reply[key] as? [String: Any])?["id"] as? Int)
        }

        @Test func listUpdateUnshareDeleteUnpairUnwatchAndSafeZones() async throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let bob = try hub.member("bob")
            try hub.befriend(alice, bob)
            let bucket = try Self.id(try alice.0.requestOK("bucket.create", ["name": "Gear"]), "bucket")
            let bike = try Self.id(try alice.0.requestOK("item.create", ["bucket": bucket, "name": "Bike"]), "item")
            let bag = try Self.id(try alice.0.requestOK("item.create", ["bucket": bucket, "name": "Bag"]), "item")
            _ = try alice.0.requestOK("bucket.share", ["bucket": bucket, "user": bob.1, "role": "viewer"])
            _ = try bob.0.nextEvent("bucket.changed")

            // bucket.list: each sees it, with their own role.
            let mine = try #require(try alice.0.requestOK("bucket.list")["buckets"] as? [[String: Any]])
            #expect(mine.map { $0["id"] as? Int } == [bucket] && mine.first?["role"] as? String == "owner")
            let theirs = try #require(try bob.0.requestOK("bucket.list")["buckets"] as? [[String: Any]])
            #expect(theirs.first?["role"] as? String == "viewer")

            // bucket.update: renamed, the viewer hears it; a viewer may not rename.
            let renamed = try alice.0.requestOK("bucket.update", ["bucket": bucket, "name": "Kit"])
            #expect((renamed["bucket"] as? [String: Any])?["name"] as? String == "Kit")
            #expect(try bob.0.nextEvent("bucket.changed")["bucket"] as? Int == bucket)
            #expect(errorCode(try bob.0.request("bucket.update", ["bucket": bucket, "name": "Mine"])) == "not_owner")

            // A tracker on the Bike reports; the viewer watches items and hears it.
            let (trackerID, key) = try hub.activeTracker(alice.0, item: bike, device: "bike-9")
            _ = try bob.0.requestOK("items.watch")
            let now = Int(Date().timeIntervalSince1970)
            func report(_ lat: Double, _ ts: Int) throws -> Int {
                try HTTPClient.get(
                    port: hub.port, path: "/v1/ingest/osmand?id=bike-9&key=\(key)&lat=\(lat)&lon=2.3&timestamp=\(ts)"
                ).status
            }
            #expect(try report(48.8, now - 30) == 200)
            #expect(try bob.0.nextEvent("item.pos")["item"] as? Int == bike)

            // items.unwatch: the next report reaches Alice's watch but not Bob's.
            _ = try alice.0.requestOK("items.watch")
            _ = try bob.0.requestOK("items.unwatch")
            #expect(try report(48.8001, now - 20) == 200)
            #expect(try alice.0.nextEvent("item.pos")["lat"] as? Double == 48.8001)
            while let event = try bob.0.pollObject(within: 0.3) {
                #expect(event["ev"] as? String != "item.pos", "\(event)")
            }

            // tracker.unpair: the key no longer reports, the position is gone, the item has no tracker.
            #expect(try alice.0.requestOK("tracker.unpair", ["tracker": trackerID])["tracker"] as? Int == trackerID)
            #expect(try report(48.8002, now - 10) == 401)
            let located = try alice.0.requestOK("item.locate", ["item": bike])
            #expect(located["position"] is NSNull)
            #expect(errorCode(try alice.0.request("tracker.unpair", ["tracker": trackerID])) == "not_found")

            // item.delete: owners only; then it is gone.
            #expect(errorCode(try bob.0.request("item.delete", ["item": bag])) == "not_owner")
            _ = try alice.0.requestOK("item.delete", ["item": bag])
            let left = try #require(
                try alice.0.requestOK("bucket.get", ["bucket": bucket])["items"] as? [[String: Any]])
            #expect(left.map { $0["id"] as? Int } == [bike])

            // bucket.unshare: the ex-viewer hears bucket.removed and is refused the bucket.
            _ = try alice.0.requestOK("bucket.unshare", ["bucket": bucket, "user": bob.1])
            #expect(try bob.0.nextEvent("bucket.removed")["bucket"] as? Int == bucket)
            #expect(errorCode(try bob.0.request("bucket.get", ["bucket": bucket])) == "not_found")

            // Safe zones: added, listed, removed; a bad radius refused.
            let zone = try alice.0.requestOK(
                "safe_zone.add", ["name": "Home", "lat": 48.8, "lon": 2.3, "radius": 100])
            let zoneID = try Self.id(zone, "zone")
            #expect(
                errorCode(try alice.0.request("safe_zone.add", ["name": "Huge", "lat": 1, "lon": 1, "radius": 1e9]))
                    == "bad_request")
            let zones = try #require(try alice.0.requestOK("safe_zone.list")["zones"] as? [[String: Any]])
            #expect(zones.map { $0["id"] as? Int } == [zoneID] && zones.first?["name"] as? String == "Home")
            #expect((try bob.0.requestOK("safe_zone.list")["zones"] as? [[String: Any]])?.isEmpty == true)
            _ = try alice.0.requestOK("safe_zone.remove", ["zone": zoneID])
            #expect((try alice.0.requestOK("safe_zone.list")["zones"] as? [[String: Any]])?.isEmpty == true)

            // bucket.delete: gone for its owner too.
            _ = try alice.0.requestOK("bucket.delete", ["bucket": bucket])
            #expect((try alice.0.requestOK("bucket.list")["buckets"] as? [[String: Any]])?.isEmpty == true)
        }
    }
}
