// OsmAnd / Traccar Client ingest over real HTTP on the hub's port: a tracker paired and activated over the WebSocket,
// then reports exactly as the apps send them (a GET with a query string, a POST with a form body, HTTP Basic),
// stored before the 200; a malformed report is 400 with a reason, bad credentials 401, an inactive tracker 403,
// and none of them changes the stored position.
import CairnApp
import CairnCore
import CairnTestSupport
import CairnTrackers
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct OsmAndIngestTests {
        /// Alice's item with an active tracker on device 123456; returns its tracker id and key.
        func paired(_ hub: RunningHub) throws -> (tracker: Int64, key: String) {
            let alice = try hub.member("alice")
            let bucket = try alice.0.requestOK("bucket.create", ["name": "Gear"])
            let bucketID = try #require((bucket["bucket"] as? [String: Any])?["id"] as? Int)
            let item = try alice.0.requestOK("item.create", ["bucket": bucketID, "name": "Bike"])
            let itemID = try #require((item["item"] as? [String: Any])?["id"] as? Int)
            let pair = try alice.0.requestOK("tracker.pair", ["item": itemID, "device": "123456"])
            let tracker = try #require(pair["tracker"] as? [String: Any])
            let id = try #require(tracker["id"] as? Int)
            _ = try alice.0.requestOK("tracker.activate", ["tracker": id])
            return (Int64(id), try #require(tracker["key"] as? String))
        }

        func stored(_ hub: RunningHub, _ tracker: Int64) async throws -> Fix? {
            try await hub.app.store.trackerFix(tracker: tracker)
        }

        static let traccarLocation = #"{"location":{"timestamp":"2021-01-01T00:00:20.000Z","#
        static let traccarRest =
            #""coords":{"latitude":48.82,"longitude":2.32,"accuracy":5,"speed":1.5,"heading":180},"#
            + #""battery":{"level":0.5}},"device_id":"123456"}"#

        @Test func reportsAsTheAppsSendThemAreStoredBeforeThe200() async throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (tracker, key) = try paired(hub)
            // Traccar Client's query string (seconds, knots), with the key added to the server URL.
            let get = try HTTPClient.get(
                port: hub.port,
                path: "/v1/ingest/osmand?id=123456&timestamp=1609459200&lat=48.8&lon=2.3&speed=10&bearing=90"
                    + "&altitude=30&accuracy=10&batt=85&key=\(key)")
            #expect(get.status == 200)
            #expect(get.body.isEmpty)
            let first = try #require(try await stored(hub, tracker))
            #expect(first.lat == 48.8 && first.lon == 2.3)
            #expect(first.ts == 1_609_459_200_000)
            #expect(abs((first.spd ?? 0) - 10 * 1852 / 3600) < 1e-9)
            #expect(first.hdg == 90 && first.alt == 30 && first.acc == 10 && first.bat == 85)
            // OsmAnd's form body with `location` and an ISO 8601 time, authenticated by HTTP Basic.
            let basic = "Basic " + Data("123456:\(key)".utf8).base64EncodedString()
            let post = try HTTPClient.post(
                port: hub.port, path: "/v1/ingest/osmand",
                body: Array("location=48.81%2C2.31&timestamp=2021-01-01T00%3A00%3A10Z&heading=360".utf8),
                contentType: "application/x-www-form-urlencoded", headers: ["Authorization": basic])
            #expect(post.status == 200)
            let second = try #require(try await stored(hub, tracker))
            #expect(second.lat == 48.81 && second.lon == 2.31 && second.hdg == 0)
            #expect(second.ts == 1_609_459_210_000)
            // Traccar Client 9's JSON body, the key in the URL.
            let json = try HTTPClient.post(
                port: hub.port, path: "/v1/ingest/osmand?key=\(key)",
                body: Array((Self.traccarLocation + Self.traccarRest).utf8),
                contentType: "application/json")
            #expect(json.status == 200)
            let third = try #require(try await stored(hub, tracker))
            #expect(third.lat == 48.82 && third.spd == 1.5 && third.hdg == 180 && third.bat == 50)
            #expect(third.ts == 1_609_459_220_000)
            // An older fix (milliseconds) arriving late is answered 200 but leaves the newest as the latest.
            let late = try HTTPClient.get(
                port: hub.port, path: "/v1/ingest/osmand?id=123456&key=\(key)&lat=1&lon=1&timestamp=1609459205000")
            #expect(late.status == 200)
            #expect(try await stored(hub, tracker)?.lat == 48.82)
        }

        @Test func malformedIs400BadCredentials401InactiveIs403AndNothingIsApplied() async throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (tracker, key) = try paired(hub)
            func status(_ query: String) throws -> (Int, String) {
                let r = try HTTPClient.get(port: hub.port, path: "/v1/ingest/osmand?" + query)
                return (r.status, String(decoding: r.body, as: UTF8.self))
            }
            for bad in [
                "id=123456&key=\(key)&lat=48.8", "id=123456&key=\(key)&lat=north&lon=2.3",
                "id=123456&key=\(key)&lat=91&lon=2.3", "id=123456&key=\(key)&lat=48.8&lon=2.3&timestamp=yesterday",
                "id=123456&key=\(key)&lat=48.8&lon=2.3&batt=120", "id=123456&key=\(key)&location=48.8",
                "id=123456&key=\(key)&lat=48.8&lon=2.3&speed=-1", "id=123456&key=\(key)&lat=nan&lon=2.3",
            ] {
                let (code, reason) = try status(bad)
                #expect(code == 400, "\(bad)")
                #expect(!reason.isEmpty, "\(bad)")
            }
            for unauthorized in [
                "id=123456&lat=48.8&lon=2.3", "id=123456&key=\(String(repeating: "A", count: 43))&lat=48.8&lon=2.3",
                "id=999999&key=\(key)&lat=48.8&lon=2.3", "key=\(key)&lat=48.8&lon=2.3",
            ] {
                #expect(try status(unauthorized).0 == 401, "\(unauthorized)")
            }
            #expect(try await stored(hub, tracker) == nil)
            let alice = try hub.client()
            _ = try alice.requestOK("login", ["username": "alice", "password": "password1"])
            _ = try alice.requestOK("tracker.deactivate", ["tracker": Int(tracker)])
            #expect(try status("id=123456&key=\(key)&lat=48.8&lon=2.3").0 == 403)
            #expect(try await stored(hub, tracker) == nil)
        }
        @Test func aReportReachesWatchingViewersNotStrangersAndSurvivesARestart() async throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let bob = try hub.member("bob")
            let mallory = try hub.member("mallory")
            try hub.befriend(alice, bob)
            let bucket = try alice.0.requestOK("bucket.create", ["name": "Gear"])
            let bucketID = try #require((bucket["bucket"] as? [String: Any])?["id"] as? Int)
            let item = try alice.0.requestOK("item.create", ["bucket": bucketID, "name": "Bike"])
            let itemID = try #require((item["item"] as? [String: Any])?["id"] as? Int)
            _ = try alice.0.requestOK("bucket.share", ["bucket": bucketID, "user": bob.1, "role": "viewer"])
            let pair = try alice.0.requestOK("tracker.pair", ["item": itemID, "device": "bike-1"])
            let tracker = try #require(pair["tracker"] as? [String: Any])
            let key = try #require(tracker["key"] as? String)
            _ = try alice.0.requestOK("tracker.activate", ["tracker": try #require(tracker["id"] as? Int)])
            _ = try bob.0.requestOK("items.watch")
            _ = try mallory.0.requestOK("items.watch")
            let ts = Int(Date().timeIntervalSince1970) - 60
            let get = try HTTPClient.get(
                port: hub.port, path: "/v1/ingest/osmand?id=bike-1&key=\(key)&lat=52.52&lon=13.405&timestamp=\(ts)")
            #expect(get.status == 200)
            let pushed = try bob.0.nextEvent("item.pos")
            #expect(pushed["item"] as? Int == itemID)
            #expect(pushed["lat"] as? Double == 52.52)
            #expect(pushed["ts"] as? Int == ts * 1000)
            while let event = try mallory.0.pollObject(within: 0.3) {
                #expect(event["ev"] as? String != "item.pos", "\(event)")
            }
            for c in [alice.0, bob.0, mallory.0] { c.close() }
            try hub.stop()
            let again = try RunningHub(dataDirectory: hub.dataDirectory)
            let c = try again.client()
            _ = try c.requestOK("login", ["username": "bob", "password": "password1"])
            let positions = try #require(try c.requestOK("items.watch")["positions"] as? [[String: Any]])
            #expect(positions.map { $0["item"] as? Int } == [itemID])
            #expect(positions.first?["lon"] as? Double == 13.405)
            try again.stop()
        }
    }
}
