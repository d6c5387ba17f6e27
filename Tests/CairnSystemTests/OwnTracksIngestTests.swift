// OwnTracks HTTP mode over real HTTP on the hub's port: a location as the app posts it (HTTP Basic, the booklet's
// JSON) is stored before the 200, pushed as `item.pos` to a viewer who watches items, and answered with the other items
// of the tracker's bucket as OwnTracks card + location messages — never the item itself, an item without a position,
// a hidden item, or anything of another bucket. Other message types and empty bodies store nothing and get `[]`; a
// malformed body is 400, bad credentials 401 with a Basic challenge, an inactive tracker 403, and none of them changes
// anything.
import CairnApp
import CairnCore
import CairnTestSupport
import CairnTrackers
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct OwnTracksIngestTests {
        static func basic(_ device: String, _ key: String) -> [String: String] {
            ["Authorization": "Basic " + Data("\(device):\(key)".utf8).base64EncodedString()]
        }

        static func post(_ hub: RunningHub, _ body: String, _ headers: [String: String]) throws -> HTTPResponse {
            var all = headers
            all["X-Limit-U"] = "alice"
            all["X-Limit-D"] = "phone"
            return try HTTPClient.post(
                port: hub.port, path: "/v1/ingest/owntracks", body: Array(body.utf8),
                contentType: "application/json; charset=utf-8", headers: all)
        }

        @Test func aLocationIsStoredPushedAndAnsweredWithTheOtherItemsOfItsBucketOnly() async throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let bob = try hub.member("bob")
            try hub.befriend(alice, bob)
            let gear = try hub.bucket(alice.0, "Gear")
            let other = try hub.bucket(alice.0, "Elsewhere")
            let bike = try hub.item(alice.0, bucket: gear, "Bike")
            let keys = try hub.item(alice.0, bucket: gear, "Keys")
            _ = try hub.item(alice.0, bucket: gear, "Bag")  // no tracker, so no position
            let car = try hub.item(alice.0, bucket: other, "Car")
            let wallet = try hub.item(alice.0, bucket: gear, "Wallet")  // hidden: for the bucket's owners only
            let phone = try hub.activeTracker(alice.0, item: bike, device: "phone-1")
            let keysTracker = try hub.activeTracker(alice.0, item: keys, device: "keys-1")
            let carTracker = try hub.activeTracker(alice.0, item: car, device: "car-1")
            let walletTracker = try hub.activeTracker(alice.0, item: wallet, device: "wallet-1")
            _ = try alice.0.requestOK("item.update", ["item": wallet, "hidden": true])
            let now = Int(Date().timeIntervalSince1970)
            for (device, key, lat) in [
                ("keys-1", keysTracker.key, 48.86), ("car-1", carTracker.key, 40.0),
                ("wallet-1", walletTracker.key, 48.9),
            ] {
                let r = try HTTPClient.get(
                    port: hub.port,
                    path: "/v1/ingest/osmand?id=\(device)&key=\(key)&lat=\(lat)&lon=2.35&timestamp=\(now - 120)"
                        + "&speed=2&accuracy=8&batt=40")
                #expect(r.status == 200)
            }
            _ = try alice.0.requestOK("bucket.share", ["bucket": gear, "user": bob.1, "role": "viewer"])
            _ = try bob.0.requestOK("items.watch")

            let body =
                #"{"_type":"location","acc":12,"alt":35,"batt":77,"bs":1,"cog":90,"lat":48.85833,"lon":2.29513,"#
                + #""t":"u","tid":"JJ","tst":\#(now - 60),"vel":18,"conn":"w","topic":"owntracks/alice/phone"}"#
            // Until an owner lets the phone see the bucket's other items, it is shown none.
            let unseen = try Self.post(hub, body, Self.basic("phone-1", phone.key))
            #expect(unseen.status == 200 && String(decoding: unseen.body, as: UTF8.self) == "[]")
            let shown = try alice.0.requestOK("tracker.update", ["tracker": phone.id, "show_items": true])
            #expect((shown["tracker"] as? [String: Any])?["show_items"] as? Bool == true)
            let refused = try bob.0.request("tracker.update", ["tracker": phone.id, "show_items": false])
            #expect((refused["error"] as? [String: Any])?["code"] as? String == "not_owner")
            let reply = try Self.post(hub, body, Self.basic("phone-1", phone.key))
            #expect(reply.status == 200)
            #expect(reply.headers["content-type"]?.hasPrefix("application/json") == true)
            // Stored before the 200.
            let stored = try #require(try await hub.app.store.trackerFix(tracker: Int64(phone.id)))
            #expect(stored.lat == 48.85833 && stored.lon == 2.29513 && stored.ts == Int64(now - 60) * 1000)
            #expect(stored.acc == 12 && stored.alt == 35 && stored.bat == 77 && stored.hdg == 90)
            #expect(abs((stored.spd ?? 0) - 5) < 1e-9)  // 18 km/h
            // Pushed to the viewer who watches items.
            let pushed = try bob.0.nextEvent("item.pos")
            #expect(pushed["item"] as? Int == bike && pushed["lat"] as? Double == 48.85833)
            // Answered with Keys only: not Bike itself, not Bag (no position), not Car (another bucket), not Wallet
            // (hidden).
            let array = try #require(try JSONSerialization.jsonObject(with: Data(reply.body)) as? [[String: Any]])
            #expect(array.map { $0["_type"] as? String } == ["card", "location"])
            let tid = String(keys, radix: 36, uppercase: true)
            #expect(array[0]["name"] as? String == "Keys" && array[0]["tid"] as? String == tid)
            #expect(array[1]["tid"] as? String == tid && array[1]["topic"] as? String == "owntracks/cairn/item\(keys)")
            #expect(array[1]["lat"] as? Double == 48.86 && array[1]["lon"] as? Double == 2.35)
            #expect(
                array[1]["tst"] as? Int == now - 120 && array[1]["acc"] as? Int == 8 && array[1]["batt"] as? Int == 40)
            #expect(array[1]["vel"] as? Int == Int((2 * 1852.0 / 3600 * 3.6).rounded()))
            #expect(!String(decoding: reply.body, as: UTF8.self).contains("Car"))
            #expect(!String(decoding: reply.body, as: UTF8.self).contains("Wallet"))

            // The Car's tracker is answered with nothing of Gear: its bucket has no other item with a position.
            let carReply = try Self.post(
                hub, #"{"_type":"location","lat":40.1,"lon":2.35,"tst":\#(now - 30),"tid":"CA"}"#,
                Self.basic("car-1", carTracker.key))
            #expect(carReply.status == 200)
            #expect(String(decoding: carReply.body, as: UTF8.self) == "[]")
            for c in [alice.0, bob.0] { c.close() }
        }

        @Test func otherMessagesStoreNothingAndRefusalsChangeNothing() async throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let gear = try hub.bucket(alice.0, "Gear")
            let bike = try hub.item(alice.0, bucket: gear, "Bike")
            let phone = try hub.activeTracker(alice.0, item: bike, device: "phone-1")
            let auth = Self.basic("phone-1", phone.key)
            for body in [
                "", #"{"_type":"transition","wtst":1,"lat":1,"lon":2,"tst":3,"acc":5,"event":"enter","tid":"JJ"}"#,
                #"{"_type":"waypoint","desc":"Home","lat":1,"lon":2,"rad":50,"tst":3}"#, #"{"_type":"lwt","tst":3}"#,
                #"{"_type":"card","name":"Jane"}"#,
            ] {
                let r = try Self.post(hub, body, auth)
                #expect(r.status == 200, "\(body)")
                #expect(String(decoding: r.body, as: UTF8.self) == "[]", "\(body)")
            }
            let location = #"{"_type":"location","lat":48.8,"lon":2.3,"tst":1609459200,"tid":"JJ"}"#
            for bad in [
                "{", #"{"lat":1}"#, #"{"_type":"location","lat":1,"lon":2}"#,
                #"{"_type":"location","lat":91,"lon":2,"tst":1609459200}"#,
                #"{"_type":"location","lat":1,"lon":2,"tst":1609459200,"batt":120}"#,
            ] {
                let r = try Self.post(hub, bad, auth)
                #expect(r.status == 400, "\(bad)")
                #expect(!r.body.isEmpty)
            }
            for wrong in [Self.basic("phone-1", phone.key + "x"), Self.basic("other", phone.key), [:]] {
                let r = try Self.post(hub, location, wrong)
                #expect(r.status == 401)
                #expect(r.headers["www-authenticate"]?.hasPrefix("Basic") == true)
            }
            // A message without a position still proves who sent it.
            #expect(try Self.post(hub, #"{"_type":"lwt","tst":3}"#, Self.basic("phone-1", "nope")).status == 401)
            #expect(try await hub.app.store.trackerFix(tracker: Int64(phone.id)) == nil)
            _ = try alice.0.requestOK("tracker.deactivate", ["tracker": phone.id])
            #expect(try Self.post(hub, location, auth).status == 403)
            #expect(try await hub.app.store.trackerFix(tracker: Int64(phone.id)) == nil)
            let get = try HTTPClient.get(port: hub.port, path: "/v1/ingest/owntracks", headers: auth)
            #expect(get.status == 405)
            alice.0.close()
        }
    }
}
