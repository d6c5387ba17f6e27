// Overland over real HTTP on the hub's port: a batch as the app posts it (`Authorization: Bearer KEY`, the README's
// GeoJSON) is stored before `{"result":"ok"}` — the key alone names the tracker — and the newest point, wherever it is
// in the batch, becomes the latest and is pushed as `item.pos` to a viewer who watches items. A batch with one
// malformed point is refused with 400 naming it and nothing of it is applied; a bad key is 401 with a Bearer
// challenge, an inactive tracker 403.
import CairnApp
import CairnCore
import CairnTestSupport
import CairnTrackers
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct OverlandIngestTests {
        static func point(_ lon: Double, _ lat: Double, _ time: String) -> String {
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":[\#(lon),\#(lat)]},"properties":{"#
                + #""timestamp":"\#(time)","altitude":12,"speed":1.5,"horizontal_accuracy":10,"#
                + #""vertical_accuracy":-1,"motion":["walking"],"battery_state":"unplugged","battery_level":0.5,"#
                + #""device_id":"","wifi":""}}"#
        }

        static func post(_ hub: RunningHub, _ body: String, key: String?) throws -> HTTPResponse {
            try HTTPClient.post(
                port: hub.port, path: "/v1/ingest/overland", body: Array(body.utf8), contentType: "application/json",
                headers: key.map { ["Authorization": "Bearer \($0)"] } ?? [:])
        }

        static func iso(_ seconds: Int) -> String {
            let f = ISO8601DateFormatter()
            return f.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
        }

        @Test func aBatchIsStoredBeforeOkAndTheNewestPointIsLatestAndPushed() async throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let bob = try hub.member("bob")
            try hub.befriend(alice, bob)
            let gear = try hub.bucket(alice.0, "Gear")
            let bike = try hub.item(alice.0, bucket: gear, "Bike")
            let tracker = try hub.activeTracker(alice.0, item: bike, device: "bike-1")
            _ = try alice.0.requestOK("bucket.share", ["bucket": gear, "user": bob.1, "role": "viewer"])
            _ = try bob.0.requestOK("items.watch")
            // The README's example, as the app sends it.
            let readme = try Self.post(hub, AppExamples.overlandReadme, key: tracker.key)
            #expect(readme.status == 200)
            #expect(String(decoding: readme.body, as: UTF8.self) == #"{"result":"ok"}"#)
            let first = try #require(try await hub.app.store.trackerFix(tracker: Int64(tracker.id)))
            #expect(first.lat == 37.3318 && first.lon == -122.030581 && first.ts == 1_443_711_600_000)
            #expect(first.spd == 4 && first.acc == 30 && first.bat == 89 && first.alt == 0)
            _ = try bob.0.nextEvent("item.pos")
            // Out of order: the newest (the middle point) becomes the latest and is what the watcher hears.
            let now = Int(Date().timeIntervalSince1970)
            let batch =
                #"{"locations":[\#(Self.point(13.40, 52.50, Self.iso(now - 30))),"#
                + #"\#(Self.point(13.42, 52.52, Self.iso(now - 10))),"#
                + #"\#(Self.point(13.41, 52.51, Self.iso(now - 20)))]}"#
            let ok = try Self.post(hub, batch, key: tracker.key)
            #expect(ok.status == 200 && String(decoding: ok.body, as: UTF8.self) == #"{"result":"ok"}"#)
            let latest = try #require(try await hub.app.store.trackerFix(tracker: Int64(tracker.id)))
            #expect(latest.lat == 52.52 && latest.ts == Int64(now - 10) * 1000)
            let pushed = try bob.0.nextEvent("item.pos")
            #expect(pushed["item"] as? Int == bike && pushed["lat"] as? Double == 52.52)
            #expect(pushed["ts"] as? Int == (now - 10) * 1000)
            // An empty batch is ok and changes nothing.
            #expect(try Self.post(hub, #"{"locations":[]}"#, key: tracker.key).status == 200)
            #expect(try await hub.app.store.trackerFix(tracker: Int64(tracker.id)) == latest)
            for c in [alice.0, bob.0] { c.close() }
        }

        @Test func aMalformedBatchIs400WithNothingAppliedAndBadKeysAre401() async throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let gear = try hub.bucket(alice.0, "Gear")
            let bike = try hub.item(alice.0, bucket: gear, "Bike")
            let tracker = try hub.activeTracker(alice.0, item: bike, device: "bike-1")
            let now = Int(Date().timeIntervalSince1970)
            let good = Self.point(13.40, 52.50, Self.iso(now - 30))
            for (bad, named) in [
                (#"{"locations":[\#(good),\#(Self.point(13.4, 52.5, "yesterday"))]}"#, "point 2"),
                (#"{"locations":[\#(good),\#(Self.point(13.4, 95, Self.iso(now - 5)))]}"#, "position 2"),
                (#"{"locations":[\#(good),{"type":"Feature","properties":{}}]}"#, "point 2"),
                ("not json", "Overland"),
            ] {
                let r = try Self.post(hub, bad, key: tracker.key)
                #expect(r.status == 400, "\(bad)")
                let reason = String(decoding: r.body, as: UTF8.self)
                #expect(reason.contains(named), "\(reason)")
                #expect(try await hub.app.store.trackerFix(tracker: Int64(tracker.id)) == nil)
            }
            for key in [tracker.key + "x", "", nil] as [String?] {
                let r = try Self.post(hub, #"{"locations":[\#(good)]}"#, key: key)
                #expect(r.status == 401)
                #expect(r.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
            }
            _ = try alice.0.requestOK("tracker.deactivate", ["tracker": tracker.id])
            #expect(try Self.post(hub, #"{"locations":[\#(good)]}"#, key: tracker.key).status == 403)
            #expect(try await hub.app.store.trackerFix(tracker: Int64(tracker.id)) == nil)
            alice.0.close()
        }
    }
}
