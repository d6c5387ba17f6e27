import CairnHub
import CairnHubTestSupport
import CairnLoop
import CairnProtocol
import Foundation
import Testing

// Finding items, hiding them, left-behind alerts and safe zones through the router: every op's fields checked with a
// `bad_request` naming the field, the item object carrying `hidden` and `alert`, `item.locate`'s answer on the wire
// (`position` null when there is none, no `navigate` then), and `item.left_behind` / `item.reunited` as JSON events.
@testable import CairnCore
@testable import CairnLiveMap
@testable import CairnTrackers

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct FindItemOpsTests {
    /// Alice (1) owns Gear with a Bike whose tracker is active; Bob (2), her friend, views Gear.
    func setting(
        configure: (inout HubConfiguration) -> Void = { _ in }
    ) async throws -> (HubHarness, item: Int64, key: String) {
        let h = HubHarness(configure: configure)
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        try await h.befriend(1, alice, 2, bob)
        let bucket = try await op(h, 1, #""bucket.create","name":"Gear""#)
        let bucketID = Int64(try #require((bucket["bucket"] as? [String: Any])?["id"] as? Int))
        let item = try await op(h, 1, #""item.create","bucket":\#(bucketID),"name":"Bike""#, jobs: 2)
        let itemID = Int64(try #require((item["item"] as? [String: Any])?["id"] as? Int))
        _ = try await op(h, 1, #""bucket.share","bucket":\#(bucketID),"user":\#(bob),"role":"viewer""#)
        let pair = try await op(h, 1, #""tracker.pair","item":\#(itemID),"device":"bike-1""#, jobs: 2)
        let tracker = try #require(pair["tracker"] as? [String: Any])
        _ = try await op(h, 1, #""tracker.activate","tracker":\#(try #require(tracker["id"] as? Int))"#)
        for c: ConnectionID in 1...2 { _ = h.outbound.take(c) }
        return (h, itemID, try #require(tracker["key"] as? String))
    }

    func op(_ h: HubHarness, _ c: ConnectionID, _ body: String, jobs: Int = 1) async throws -> [String: Any] {
        try await h.request(c, #"{"id":7,"op":\#(body)}"#, id: 7, completions: jobs)
    }

    func code(_ reply: [String: Any]) -> String? { (reply["error"] as? [String: Any])?["code"] as? String }
    func message(_ reply: [String: Any]) -> String { (reply["error"] as? [String: Any])?["message"] as? String ?? "" }

    func report(_ h: HubHarness, key: String, lat: Double) async throws {
        try await h.hub.trackerIngest.report(
            TrackerReport(
                device: "bike-1", key: key, position: PositionReport(lat: lat, lon: 2.3, acc: 4, bat: 60, ts: 1_000)))
        try await h.scheduler.run()
    }

    @Test func locateOnTheWire() async throws {
        let (h, item, key) = try await setting()
        let none = try await op(h, 2, #""item.locate","item":\#(item)"#)
        #expect(none["item"] as? Int == Int(item))
        #expect(none.keys.contains("position") && none["position"] is NSNull)
        #expect(none["navigate"] == nil && none["distance"] == nil)
        try await report(h, key: key, lat: 48.8)
        h.stand(2, lat: 48.8, lon: 2.3)
        let found = try await op(h, 2, #""item.locate","item":\#(item)"#)
        let position = try #require(found["position"] as? [String: Any])
        #expect(Set(position.keys) == ["lat", "lon", "acc", "ts", "bat"])
        #expect(
            position["lat"] as? Double == 48.8 && position["bat"] as? Double == 60 && position["ts"] as? Int == 1000)
        #expect(found["distance"] as? Double == 0)
        let navigate = try #require(found["navigate"] as? [String: Any])
        #expect(navigate["mode"] as? String == "walking")
        #expect(navigate["geo"] as? String == "geo:48.800000,2.300000;u=4")
        #expect((navigate["apple"] as? String)?.hasPrefix("https://maps.apple.com/?saddr=48.800000,2.300000&") == true)
        #expect((navigate["google"] as? String)?.hasSuffix("&travelmode=walking") == true)
        for (body, field) in [
            (#""item.locate""#, "item"), (#""item.locate","item":"x""#, "item"), (#""item.locate","item":0"#, "item"),
        ] {
            let refused = try await op(h, 2, body, jobs: 0)
            #expect(code(refused) == "bad_request", "\(body)")
            #expect(message(refused).contains(field), "\(body)")
        }
    }

    @Test func itemsCarryHiddenAndAlertAndOnlyOwnersSwitchThem() async throws {
        let (h, item, _) = try await setting()
        let got = try await op(h, 1, #""item.update","item":\#(item),"hidden":true,"alert":true"#, jobs: 2)
        let object = try #require(got["item"] as? [String: Any])
        #expect(object["hidden"] as? Bool == true && object["alert"] as? Bool == true)
        let refused = try await op(h, 2, #""item.update","item":\#(item),"hidden":false"#)
        #expect(code(refused) == "not_owner")
        let wrongType = try await op(h, 1, #""item.update","item":\#(item),"alert":"yes""#, jobs: 0)
        #expect(code(wrongType) == "bad_request" && message(wrongType).contains("alert"))
        let nothing = try await op(h, 1, #""item.update","item":\#(item)"#, jobs: 0)
        #expect(code(nothing) == "bad_request" && message(nothing).contains("'hidden'"))
        let listed = try await op(h, 2, #""bucket.get","bucket":1"#)
        let items = try #require(listed["items"] as? [[String: Any]])
        #expect(items.first?["hidden"] as? Bool == true && items.first?["alert"] as? Bool == true)
    }

    @Test func leftBehindAndReunitedAsEvents() async throws {
        let (h, item, key) = try await setting { $0.leftBehindGraceMs = 0 }
        try await report(h, key: key, lat: 48.8)
        h.stand(1, lat: 48.8, lon: 2.3)
        _ = try await op(h, 1, #""item.update","item":\#(item),"alert":true"#, jobs: 1)  // bucket.changed's read too
        _ = h.outbound.take(1)
        h.move(1, lat: 48.802, lon: 2.3)  // about 222 m north, both fixes within 5 m
        let left = try #require(h.outbound.take(1).first { $0["ev"] as? String == "item.left_behind" })
        #expect(left["item"] as? Int == Int(item))
        #expect(left["distance"] as? Double == 222)
        #expect(left["lat"] as? Double == 48.8 && left["lon"] as? Double == 2.3)
        #expect(!h.outbound.take(2).contains { ($0["ev"] as? String)?.hasPrefix("item.") == true })  // a viewer
        h.move(1, lat: 48.8005, lon: 2.3)
        let back = try #require(h.outbound.take(1).first { $0["ev"] as? String == "item.reunited" })
        #expect(back["item"] as? Int == Int(item))
        #expect(Set(back.keys) == ["ev", "item"])
    }

    @Test func safeZoneOpsCheckEveryField() async throws {
        let (h, _, _) = try await setting()
        for (body, field) in [
            (#""safe_zone.add","lat":1,"lon":2,"radius":50"#, "name"),
            (#""safe_zone.add","name":"Home","lon":2,"radius":50"#, "lat"),
            (#""safe_zone.add","name":"Home","lat":1,"radius":50"#, "lon"),
            (#""safe_zone.add","name":"Home","lat":1,"lon":2"#, "radius"),
            (#""safe_zone.add","name":"Home","lat":"1","lon":2,"radius":50"#, "lat"),
            (#""safe_zone.add","name":"","lat":1,"lon":2,"radius":50"#, "name"),
            (#""safe_zone.add","name":"Home","lat":1,"lon":200,"radius":50"#, "lon"),
            (#""safe_zone.add","name":"Home","lat":1,"lon":2,"radius":1"#, "radius"),
            (#""safe_zone.remove""#, "zone"), (#""safe_zone.remove","zone":-1"#, "zone"),
        ] {
            let refused = try await op(h, 1, body, jobs: 0)
            #expect(code(refused) == "bad_request", "\(body)")
            #expect(message(refused).contains(field), "\(body): \(message(refused))")
        }
        let added = try await op(h, 1, #""safe_zone.add","name":"Home","lat":48.8,"lon":2.3,"radius":75.5"#)
        let zone = try #require(added["zone"] as? [String: Any])
        #expect(Set(zone.keys) == ["id", "name", "lat", "lon", "radius"])
        #expect(zone["name"] as? String == "Home" && zone["radius"] as? Double == 75.5)
        let id = try #require(zone["id"] as? Int)
        let listed = try await op(h, 1, #""safe_zone.list""#, jobs: 0)
        #expect((listed["zones"] as? [[String: Any]])?.map { $0["id"] as? Int } == [id])
        #expect((try await op(h, 2, #""safe_zone.list""#, jobs: 0)["zones"] as? [Any])?.isEmpty == true)
        #expect(code(try await op(h, 2, #""safe_zone.remove","zone":\#(id)"#)) == "not_found")
        #expect(try await op(h, 1, #""safe_zone.remove","zone":\#(id)"#)["zone"] as? Int == id)
        #expect((try await op(h, 1, #""safe_zone.list""#, jobs: 0)["zones"] as? [Any])?.isEmpty == true)
    }
}
