import CairnGeo
import CairnHub
import CairnHubTestSupport
import CairnLoop
import CairnProtocol
import Foundation
import Synchronization
import Testing

// The place ops through the router: places.nearest (position from the request or the caller's last `pos`, limit
// and radius checked, category before the limit), places.search (prefix, accents and case folded), place.get with
// attributes, operators' place.upsert / place.remove (forbidden to others, applied at once), and places.reload
// picking up places written straight into the store (as `cairn places import` does).
@testable import CairnCore
@testable import CairnPlaces

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct PlaceOpsTests {
    func seeded(configure: (inout HubConfiguration) -> Void = { _ in }) -> HubHarness {
        let h = HubHarness(configure: configure)
        h.places.state.withLock { s in
            let rows: [(String, String, Double, Double)] = [
                ("Zermatt", "ski_area", 46.02, 7.75), ("Verbier", "ski_area", 46.10, 7.23),
                ("Crans-Montana", "ski_area", 46.31, 7.48), ("Matterhorn", "peak", 45.98, 7.66),
                ("Sion", "city", 46.23, 7.36), ("Val d'Isère", "ski_area", 45.45, 6.98),
            ]
            for (name, category, lat, lon) in rows {
                let draft = PlaceDraft(
                    source: "test", externalID: name, name: name, category: category, lat: lat, lon: lon,
                    attributes: [PlaceAttribute("elevation", .number(1600)), PlaceAttribute("open", .flag(true))])
                s.places[s.next] = Place(id: s.next, draft: draft)
                s.next += 1
            }
        }
        let summaries = h.places.state.withLock { $0.places.values.compactMap(\.summary) }
        h.hub.places.restore(summaries)
        return h
    }

    func names(_ reply: [String: Any]) -> [String] {
        (reply["places"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
    }

    func ops(_ h: HubHarness, _ connection: ConnectionID, _ name: String) async throws {
        let id = try await h.user(connection, name)
        h.store.state.withLock { _ = $0.ops.insert(id) }
    }

    @Test func nearestFromTheCallersLastPositionOrtheRequest() async throws {
        let h = seeded()
        _ = try await h.user(1, "alice")
        let none = try await h.request(1, #"{"id":2,"op":"places.nearest"}"#, id: 2)
        #expect(errorCode(none) == "bad_request")
        #expect(
            (none["error"] as? [String: Any])?["message"] as? String
                == "no position: give 'lat' and 'lon', or report one with 'pos' first")
        h.move(1, lat: 46.0, lon: 7.7)
        let mine = try await h.request(1, #"{"id":3,"op":"places.nearest","limit":3}"#, id: 3)
        #expect(names(mine) == ["Matterhorn", "Zermatt", "Sion"])
        let distances = (mine["places"] as? [[String: Any]] ?? []).compactMap { $0["distance"] as? Double }
        #expect(distances == distances.sorted() && distances.count == 3)
        // Metres to a tenth: ten times each distance is a whole number (up to the double nearest the decimal).
        #expect(distances.allSatisfy { abs($0 * 10 - ($0 * 10).rounded()) < 1e-6 && $0 > 0 })
        let there = try await h.request(1, #"{"id":4,"op":"places.nearest","lat":45.4,"lon":7.0,"limit":1}"#, id: 4)
        #expect(names(there) == ["Val d'Isère"])
        let first = try #require((there["places"] as? [[String: Any]])?.first)
        #expect(first["category"] as? String == "ski_area" && first["place"] as? Int != nil)
    }

    @Test func categoryAndRadiusApplyBeforeTheLimit() async throws {
        let h = seeded()
        _ = try await h.user(1, "alice")
        let skiing = try await h.request(
            1, #"{"id":2,"op":"places.nearest","lat":45.98,"lon":7.66,"limit":2,"category":"ski_area"}"#, id: 2)
        #expect(names(skiing) == ["Zermatt", "Verbier"])
        let near = try await h.request(
            1, #"{"id":3,"op":"places.nearest","lat":45.98,"lon":7.66,"radius":10000}"#, id: 3)
        #expect(names(near) == ["Matterhorn", "Zermatt"])
        let nothing = try await h.request(
            1, #"{"id":4,"op":"places.nearest","lat":45.98,"lon":7.66,"category":"airport"}"#, id: 4)
        #expect(names(nothing).isEmpty && nothing["ok"] as? Bool == true)
    }

    @Test func badRequestsNameTheField() async throws {
        let h = seeded()
        _ = try await h.user(1, "alice")
        let cases: [(String, String)] = [
            (#""lat":45"#, "lon"), (#""lon":7"#, "lat"), (#""lat":95,"lon":7"#, "lat"),
            (#""lat":45,"lon":7,"limit":0"#, "limit"), (#""lat":45,"lon":7,"limit":101"#, "limit"),
            (#""lat":45,"lon":7,"radius":-1"#, "radius"), (#""lat":"x","lon":7"#, "lat"),
        ]
        for (i, (fields, field)) in cases.enumerated() {
            let reply = try await h.request(1, #"{"id":\#(i + 10),"op":"places.nearest",\#(fields)}"#, id: i + 10)
            #expect(errorCode(reply) == "bad_request", "\(fields)")
            let message = (reply["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.contains("'\(field)'"), "\(fields): \(message)")
        }
    }

    @Test func searchFoldsAccentsAndCase() async throws {
        let h = seeded()
        _ = try await h.user(1, "alice")
        let reply = try await h.request(1, #"{"id":2,"op":"places.search","q":"VAL D'ISE"}"#, id: 2)
        #expect(names(reply) == ["Val d'Isère"])
        let m = try await h.request(1, #"{"id":3,"op":"places.search","q":"ma"}"#, id: 3)
        #expect(names(m) == ["Matterhorn"])
        let empty = try await h.request(1, #"{"id":4,"op":"places.search","q":" "}"#, id: 4)
        #expect(errorCode(empty) == "bad_request")
    }

    func message(_ reply: [String: Any]) -> String {
        ((reply["error"] as? [String: Any])?["message"] as? String) ?? ""
    }

    @Test func aSearchQueryIsBoundedBeforeItIsFolded() async throws {
        let h = seeded()
        _ = try await h.user(1, "alice")
        // 200 bytes is the most: a query of that length is folded and searched; one byte more is refused unfolded,
        // and a 60 KB one is refused by the codec's bound on every string field, before the feature sees it.
        let most = "ma" + String(repeating: "é", count: 99)
        let longest = try await h.request(1, #"{"id":2,"op":"places.search","q":"\#(most)"}"#, id: 2)
        #expect(names(longest).isEmpty && errorCode(longest) == nil)
        let over = try await h.request(1, #"{"id":3,"op":"places.search","q":"\#(most)x"}"#, id: 3)
        #expect(errorCode(over) == "bad_request" && message(over).contains("at most 200 bytes"))
        let huge = String(repeating: "Ǆ", count: 30_000)
        let flood = try await h.request(1, #"{"id":4,"op":"places.search","q":"\#(huge)"}"#, id: 4)
        #expect(errorCode(flood) == "bad_request" && message(flood).contains("at most 4096 bytes"))
        #expect(h.hub.places.counts.searches == 1, "only the query within bounds was searched")
    }

    @Test func getShowsTheAttributes() async throws {
        let h = seeded()
        _ = try await h.user(1, "alice")
        let reply = try await h.request(1, #"{"id":2,"op":"place.get","place":1}"#, id: 2, completions: 1)
        let place = try #require(reply["place"] as? [String: Any])
        #expect(place["name"] as? String == "Zermatt")
        #expect(place["source"] as? String == "test" && place["external"] as? String == "Zermatt")
        let attributes = try #require(place["attributes"] as? [String: Any])
        #expect(attributes["elevation"] as? Double == 1600 && attributes["open"] as? Bool == true)
        let missing = try await h.request(1, #"{"id":3,"op":"place.get","place":999}"#, id: 3)
        #expect(errorCode(missing) == "not_found")
        let noField = try await h.request(1, #"{"id":4,"op":"place.get"}"#, id: 4)
        #expect(errorCode(noField) == "bad_request")
    }

    @Test func onlyOperatorsWriteAndWritesApplyAtOnce() async throws {
        let h = seeded()
        _ = try await h.user(1, "alice")
        let upsert =
            #"{"id":2,"op":"place.upsert","name":"Saas-Fee","category":"ski_area","lat":46.11,"lon":7.93,"#
            + #""external":"sf","attributes":{"elevation":1800,"url":"https://saas-fee.ch","lifts":true}}"#
        let refused = try await h.request(1, upsert, id: 2, completions: 1)
        #expect(errorCode(refused) == "forbidden")
        #expect(h.places.state.withLock { $0.places.count } == 6)

        try await ops(h, 2, "operator")
        let stored = try await h.request(2, upsert, id: 2, completions: 1)
        let place = try #require(stored["place"] as? [String: Any])
        let id = try #require(place["place"] as? Int)
        #expect((place["attributes"] as? [String: Any])?["url"] as? String == "https://saas-fee.ch")
        let near = try await h.request(
            1, #"{"id":3,"op":"places.nearest","lat":46.11,"lon":7.93,"limit":1}"#, id: 3)
        #expect(names(near) == ["Saas-Fee"])
        // The same (source, external id) updates.
        let again = upsert.replacingOccurrences(of: "Saas-Fee", with: "Saas Fee")
        _ = try await h.request(2, again, id: 2, completions: 1)
        #expect(h.places.state.withLock { $0.places.count } == 7)
        let search = try await h.request(1, #"{"id":4,"op":"places.search","q":"saas"}"#, id: 4)
        #expect(names(search) == ["Saas Fee"])

        let bad = try await h.request(
            2, #"{"id":5,"op":"place.upsert","name":"X","category":"a b","lat":1,"lon":1}"#, id: 5)
        #expect(errorCode(bad) == "bad_request")
        // Too many attributes are refused before any is read (by anyone: the request is decoded before the role).
        let many = (0...Places.maxAttributes).map { #""k\#($0)":\#($0)"# }.joined(separator: ",")
        let crowded = #"{"id":6,"op":"place.upsert","name":"Z","lat":1,"lon":1,"attributes":{\#(many)}}"#
        for connection in [ConnectionID(1), ConnectionID(2)] {
            let refused = try await h.request(connection, crowded, id: 6)
            #expect(errorCode(refused) == "bad_request" && message(refused).contains("at most 64 attributes"))
        }

        // Another place may not take Saas Fee's (source, external id).
        let other = try await h.request(
            2, #"{"id":9,"op":"place.upsert","name":"Y","category":"hut","lat":1,"lon":1,"external":"y"}"#, id: 9,
            completions: 1)
        let otherID = try #require((other["place"] as? [String: Any])?["place"] as? Int)
        let clash = try await h.request(
            2,
            #"{"id":9,"op":"place.upsert","place":\#(otherID),"name":"Y","category":"hut","lat":1,"lon":1,"#
                + #""external":"sf"}"#, id: 9, completions: 1)
        #expect(errorCode(clash) == "bad_request")
        #expect(
            (clash["error"] as? [String: Any])?["message"] as? String
                == "another place already has source 'ops' and id 'sf'")

        let removed = try await h.request(2, #"{"id":6,"op":"place.remove","place":\#(id)}"#, id: 6, completions: 1)
        #expect(removed["place"] as? Int == id)
        let gone = try await h.request(1, #"{"id":7,"op":"places.nearest","lat":46.11,"lon":7.93,"limit":1}"#, id: 7)
        #expect(names(gone) != ["Saas Fee"])
        let twice = try await h.request(2, #"{"id":8,"op":"place.remove","place":\#(id)}"#, id: 8, completions: 1)
        #expect(errorCode(twice) == "not_found")
    }

    @Test func reloadPicksUpWhatWasWrittenToTheStore() async throws {
        let h = seeded()
        try await ops(h, 1, "operator")
        _ = try await h.places.upsertPlaces([
            PlaceDraft(source: "cli", externalID: "1", name: "Aletsch", category: "peak", lat: 46.5, lon: 8.0)
        ])
        let before = try await h.request(1, #"{"id":2,"op":"places.search","q":"aletsch"}"#, id: 2)
        #expect(names(before).isEmpty)
        _ = try await h.user(2, "bob")
        let refused = try await h.request(2, #"{"id":3,"op":"places.reload"}"#, id: 3, completions: 1)
        #expect(errorCode(refused) == "forbidden")
        let reply = try await h.request(1, #"{"id":4,"op":"places.reload"}"#, id: 4, completions: 2)
        #expect(reply["count"] as? Int == 7)
        let after = try await h.request(1, #"{"id":5,"op":"places.search","q":"aletsch"}"#, id: 5)
        #expect(names(after) == ["Aletsch"])
    }

    @Test func manyWritesRebuildTheIndexWithoutLosingAny() async throws {
        let h = seeded { config in  // one connection sends them all, faster than a client may
            config.messagesPerSecond = 0
        }
        try await ops(h, 1, "operator")
        var state: UInt64 = 99
        func next() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53)
        }
        // 400 writes pass the rebuild threshold (256) while queries and removals go on; the rebuild runs off the
        // loop while more writes land, and they must be replayed onto the new index.
        for i in 0..<400 {
            let lat = next() * 180 - 90
            let lon = next() * 360 - 180
            let upsert =
                #"{"id":2,"op":"place.upsert","name":"P\#(i)","external":"p\#(i % 350)","lat":\#(lat),"lon":\#(lon)}"#
            _ = try await h.request(1, upsert, id: 2, completions: 1)
            if i % 37 == 0 {
                let victim = h.places.state.withLock { $0.places.keys.sorted()[Int(next() * 6)] }
                _ = try await h.request(1, #"{"id":3,"op":"place.remove","place":\#(victim)}"#, id: 3, completions: 1)
            }
        }
        while h.hub.operationsInFlight > 0 { try await h.scheduler.run() }
        let stored = h.places.state.withLock { $0.places }
        #expect(h.hub.places.count == stored.count)
        for q in 0..<30 {
            let lat = next() * 180 - 90
            let lon = next() * 360 - 180
            let reply = try await h.request(
                1, #"{"id":\#(10 + q),"op":"places.nearest","lat":\#(lat),"lon":\#(lon),"limit":15}"#, id: 10 + q)
            let ids = (reply["places"] as? [[String: Any]] ?? []).compactMap { $0["place"] as? Int }
            let centre = PlaceSummary(id: 0, name: "c", category: "c", lat: lat, lon: lon)!.point
            var all: [(id: Int64, distance: Double)] = []
            for place in stored.values { all.append((place.id, centre.distance(to: place.summary!.point))) }
            all.sort { $0.distance < $1.distance || ($0.distance == $1.distance && $0.id < $1.id) }
            let expected = all.prefix(15).map { Int($0.id) }
            #expect(ids == expected, "query \(q)")
        }
    }
}
