// Find my item and left behind over real sockets: a tracker paired over the WebSocket reports through OsmAnd's HTTP
// ingest on the hub's port, the owner reports `pos` on the WebSocket; `item.locate` answers the distance and the
// directions, a stranger gets `not_found`; with `alert` on and a one-second grace time, walking 250 m away brings
// `item.left_behind` on the hub's own tick, and walking back `item.reunited`.
import CairnApp
import CairnCore
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct FindItemTests {
        static let metresPerDegree = 6_371_008.8 * Double.pi / 180

        @Test func locateThenLeftBehindAndReunitedEndToEnd() async throws {
            let hub = try RunningHub { $0.hub.leftBehindGraceMs = 1_000 }
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let mallory = try hub.member("mallory")
            let bucket = try alice.0.requestOK("bucket.create", ["name": "Gear"])
            let bucketID = try #require((bucket["bucket"] as? [String: Any])?["id"] as? Int)
            let item = try alice.0.requestOK("item.create", ["bucket": bucketID, "name": "Bike"])
            let itemID = try #require((item["item"] as? [String: Any])?["id"] as? Int)
            let pair = try alice.0.requestOK("tracker.pair", ["item": itemID, "device": "bike-77"])
            let tracker = try #require(pair["tracker"] as? [String: Any])
            _ = try alice.0.requestOK("tracker.activate", ["tracker": try #require(tracker["id"] as? Int)])
            let key = try #require(tracker["key"] as? String)

            // The Bike reports where it lies, as OsmAnd does.
            let now = Int(Date().timeIntervalSince1970)
            let report = try HTTPClient.get(
                port: hub.port,
                path: "/v1/ingest/osmand?id=bike-77&key=\(key)&lat=48.8&lon=2.3&accuracy=5&batt=70&timestamp=\(now)")
            #expect(report.status == 200)

            // Alice stands 250 m north of it (twice: a session's first fix is confirmed by the next).
            let away = 48.8 + 250 / Self.metresPerDegree
            for _ in 0..<2 { try alice.0.send(["op": "pos", "lat": away, "lon": 2.3]) }
            var found: [String: Any] = [:]
            // The item's position reaches the loop right after the 200; ask until it is there.
            for _ in 0..<50 {
                found = try alice.0.requestOK("item.locate", ["item": itemID])
                if found["distance"] != nil { break }
                try await Task.sleep(nanoseconds: 20_000_000)
            }
            #expect(found["item"] as? Int == itemID)
            let position = try #require(found["position"] as? [String: Any])
            #expect(position["lat"] as? Double == 48.8 && position["acc"] as? Double == 5)
            #expect(position["bat"] as? Double == 70 && position["ts"] as? Int == now * 1000)
            #expect(found["distance"] as? Double == 250)
            let navigate = try #require(found["navigate"] as? [String: Any])
            #expect(navigate["mode"] as? String == "walking")
            #expect(navigate["geo"] as? String == "geo:48.800000,2.300000;u=5")
            #expect(
                navigate["apple"] as? String
                    == "https://maps.apple.com/?saddr=48.802248,2.300000&daddr=48.800000,2.300000&dirflg=w")
            #expect(
                navigate["google"] as? String
                    == "https://www.google.com/maps/dir/?api=1&origin=48.802248,2.300000"
                    + "&destination=48.800000,2.300000&travelmode=walking")
            let stranger = try mallory.0.request("item.locate", ["item": itemID])
            #expect(errorCode(stranger) == "not_found")

            // Alert on: Alice is already 250 m away; after the one-second grace the tick tells her.
            let updated = try alice.0.requestOK("item.update", ["item": itemID, "alert": true])
            #expect((updated["item"] as? [String: Any])?["alert"] as? Bool == true)
            #expect((updated["item"] as? [String: Any])?["hidden"] as? Bool == false)
            let left = try alice.0.nextEvent("item.left_behind", timeout: 5)
            #expect(left["item"] as? Int == itemID)
            #expect(left["distance"] as? Double == 250)
            #expect(left["lat"] as? Double == 48.8 && left["lon"] as? Double == 2.3)
            #expect(try mallory.0.pollObject(within: 0.2) == nil)

            // Back at the Bike.
            try alice.0.send(["op": "pos", "lat": 48.8, "lon": 2.3])
            let back = try alice.0.nextEvent("item.reunited", timeout: 5)
            #expect(back["item"] as? Int == itemID)
        }
    }
}
