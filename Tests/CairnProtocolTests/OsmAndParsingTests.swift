import CairnCore
import CairnHub
import CairnHubTestSupport
import CairnLoop
import Synchronization
import Testing

// Reading OsmAnd / Traccar Client requests: the device id and key from the query, a form body or HTTP Basic; lat/lon
// or `location`; times as epoch seconds, milliseconds or ISO 8601 (with zones, fractions, and a `+` that a form
// encoder turned into a space); knots to m/s; and a typed refusal, with a reason, for everything else. Then the ingest
// behind the endpoint, with in-memory stores: an inactive tracker is 403 and a failed write 503, nothing applied.
@testable import CairnLiveMap
@testable import CairnProtocol
@testable import CairnTrackers

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct OsmAndParsingTests {
    func parse(_ query: String?, body: String = "", type: String? = nil, auth: String? = nil) -> TrackerReport? {
        let request = HTTPRequest(
            method: body.isEmpty ? "GET" : "POST", path: "/v1/ingest/osmand", query: query, authorization: auth,
            contentType: type, body: Array(body.utf8))
        return try? OsmAndEndpoint.parse(request).get()
    }

    func refusal(_ query: String?, body: String = "", auth: String? = nil) -> IngestRefusal? {
        let request = HTTPRequest(
            method: body.isEmpty ? "GET" : "POST", path: "/v1/ingest/osmand", query: query, authorization: auth,
            body: Array(body.utf8))
        if case .failure(let refusal) = OsmAndEndpoint.parse(request) { return refusal }
        return nil
    }

    @Test func queryFormAndBasicCredentials() throws {
        let traccar =
            "id=123456&timestamp=1609459200&lat=48.8&lon=2.3&speed=0&bearing=0&altitude=30&accuracy=10&batt=85"
        let q = try #require(parse(traccar + "&key=k"))
        #expect(q.device == "123456" && q.key == "k")
        #expect(
            q.positions[0]
                == PositionReport(lat: 48.8, lon: 2.3, acc: 10, alt: 30, spd: 0, hdg: 0, bat: 85, ts: 1_609_459_200_000)
        )
        let form = try #require(
            parse(
                nil, body: "deviceid=dev-1&key=k%2Fx&location=-33.9%2C18.4&speed=1",
                type: "application/x-www-form-urlencoded"))
        #expect(form.device == "dev-1" && form.key == "k/x")
        #expect(form.positions[0].lat == -33.9 && form.positions[0].lon == 18.4)
        #expect(abs((form.positions[0].spd ?? 0) - 0.514444) < 1e-5)
        // Basic: user is the device id, password the key ("dev-1:s3cret:x" keeps colons in the password).
        let basic = try #require(parse("lat=1&lon=2", auth: "Basic ZGV2LTE6czNjcmV0Ong="))
        #expect(basic.device == "dev-1" && basic.key == "s3cret:x")
        #expect(refusal("id=other&lat=1&lon=2", auth: "Basic ZGV2LTE6czNjcmV0Ong=") == .badCredentials)
        #expect(refusal("lat=1&lon=2") == .badCredentials)
        #expect(refusal("id=a&key=&lat=1&lon=2") == .badCredentials)
        #expect(refusal("id=a&key=k&lat=1&lon=2", auth: "Basic !!!") == nil)  // not Basic: query credentials stand
    }

    /// U+0000 (`%00`, a raw byte in a form body, or inside Basic credentials) never reaches the tracker lookup: the
    /// field reads as a broken one (U+FFFD, an unknown device), Basic credentials with it are none.
    @Test func textWithNulNeverReachesTheStore() throws {
        let query = try #require(parse("id=ab%00c&key=k%00&lat=1&lon=2"))
        #expect(query.device == "\u{FFFD}" && query.key == "\u{FFFD}")
        let form = try #require(parse(nil, body: "id=ab\u{0}c&key=k&lat=1&lon=2", type: "text/plain"))
        #expect(form.device == "\u{FFFD}")
        #expect(refusal("lat=1&lon=2", auth: "Basic ZGV2AC0xOmtleQ==") == .badCredentials)  // "dev\0-1:key"
    }

    @Test func timesInEveryFormTheAppsUse() throws {
        func ts(_ text: String) -> Int64? { try? IngestNumbers.timestamp(text) }
        #expect(ts("1609459200") == 1_609_459_200_000)
        #expect(ts("1609459200.25") == 1_609_459_200_250)
        #expect(ts("1609459200123") == 1_609_459_200_123)
        #expect(ts("2021-01-01T00:00:00Z") == 1_609_459_200_000)
        #expect(ts("2021-01-01T00:00:00.5Z") == 1_609_459_200_500)
        #expect(ts("2021-01-01 01:00:00+01:00") == 1_609_459_200_000)
        #expect(ts("2021-01-01T01:00:00 0100") == 1_609_459_200_000)
        #expect(ts("2020-12-31T19:00:00-05") == 1_609_459_200_000)
        #expect(ts("2024-02-29T12:00:00") == 1_709_208_000_000)
        for bad in ["", "yesterday", "2021-13-01T00:00:00Z", "2021-01-01", "2021-01-01T00:00:00Zjunk", "1e9", "-5"] {
            #expect(ts(bad) == nil, "\(bad)")
        }
        #expect(
            refusal("id=a&key=k&lat=1&lon=2&timestamp=soon").map { if case .malformed = $0 { true } else { false } }
                == true)
    }

    @Test func validFalseMarksTheFixForTheInvalidFilter() throws {
        let base = "id=a&key=k&lat=1&lon=2"
        #expect(try #require(parse(base)).markedInvalid.isEmpty)
        #expect(try #require(parse(base + "&valid=true")).markedInvalid.isEmpty)
        #expect(try #require(parse(base + "&valid=1")).markedInvalid.isEmpty)
        #expect(try #require(parse(base + "&valid=false")).markedInvalid == [0])
        #expect(try #require(parse(base + "&valid=FALSE")).markedInvalid == [0])
        #expect(try #require(parse(base + "&valid=0")).markedInvalid == [0])
        guard case .malformed(let reason) = refusal(base + "&valid=maybe") else {
            Issue.record("valid=maybe was not refused")
            return
        }
        #expect(reason.contains("valid"))
    }

    @Test func malformedValuesAreRefusedWithAReason() {
        for bad in [
            "id=a&key=k&lat=1", "id=a&key=k&lat=1&lon=east", "id=a&key=k&location=1;2", "id=a&key=k&lat=inf&lon=2",
            "id=a&key=k&lat=0x10&lon=2", "id=a&key=k&lat=1&lon=2&batt=full", "id=a&key=k&lat=%ZZ&lon=2",
        ] {
            guard case .malformed(let reason) = refusal(bad) else {
                Issue.record("not malformed: \(bad)")
                continue
            }
            #expect(!reason.isEmpty)
        }
        let xml = HTTPRequest(
            method: "POST", path: "/v1/ingest/osmand", contentType: "application/xml", body: Array("<a/>".utf8))
        #expect((try? OsmAndEndpoint.parse(xml).get()) == nil)
    }

    @Test func inactiveIs403AndAFailedWriteIs503WithNothingApplied() async throws {
        let h = HubHarness()
        _ = try await h.user(1, "alice")
        let bucket = try await h.request(1, #"{"id":7,"op":"bucket.create","name":"Gear"}"#, id: 7, completions: 1)
        let bucketID = try #require((bucket["bucket"] as? [String: Any])?["id"] as? Int)
        let item = try await h.request(
            1, #"{"id":7,"op":"item.create","bucket":\#(bucketID),"name":"Bike"}"#, id: 7, completions: 2)
        let itemID = try #require((item["item"] as? [String: Any])?["id"] as? Int)
        let pair = try await h.request(
            1, #"{"id":7,"op":"tracker.pair","item":\#(itemID),"device":"dev-1"}"#, id: 7, completions: 2)
        let tracker = try #require(pair["tracker"] as? [String: Any])
        let key = try #require(tracker["key"] as? String)
        let endpoint = OsmAndEndpoint(ingest: h.hub.trackerIngest)
        func send(_ query: String) async -> Int {
            await endpoint.handle(HTTPRequest(method: "GET", path: "/v1/ingest/osmand", query: query)).status
        }
        #expect(await send("id=dev-1&key=\(key)&lat=1&lon=2") == 403)
        _ = try await h.request(
            1, #"{"id":7,"op":"tracker.activate","tracker":\#(tracker["id"] as? Int ?? 0)}"#, id: 7, completions: 1)
        #expect(await send("id=dev-1&key=\(key)x&lat=1&lon=2") == 401)
        // A clock an hour ahead: well-formed, dropped by the future filter, answered 200 and stored nowhere.
        #expect(await send("id=dev-1&key=\(key)&lat=1&lon=2&timestamp=\(h.clock.now() + 3_600_000)") == 200)
        h.trackers.state.withLock { $0.failWrites = true }
        #expect(await send("id=dev-1&key=\(key)&lat=1&lon=2") == 503)
        h.trackers.state.withLock { $0.failWrites = false }
        #expect(h.trackers.state.withLock { $0.fixes.isEmpty })
        #expect(await send("id=dev-1&key=\(key)&lat=1&lon=2") == 200)
        #expect(h.trackers.state.withLock { $0.fixes.values.first?.lat } == 1)
        #expect(await endpoint.handle(HTTPRequest(method: "PUT", path: "/v1/ingest/osmand")).status == 405)
    }

    /// Traccar Client 9's body, as in Traccar's protocol page.
    static let traccarJSON = """
        {"location":{"timestamp":"2021-01-01T00:00:00.000Z","coords":{"latitude":48.8,"longitude":2.3,\
        "accuracy":10,"speed":5,"heading":-1,"altitude":30},"is_moving":false,"odometer":0,"event":"motionchange",\
        "battery":{"level":0.85,"is_charging":false},"activity":{"type":"still"},"extras":{}},"device_id":"48241179"}
        """

    @Test func traccarClientJSON() throws {
        let report = try #require(parse("key=k", body: Self.traccarJSON, type: "application/json"))
        #expect(report.device == "48241179" && report.key == "k")
        #expect(
            report.positions[0]
                == PositionReport(
                    lat: 48.8, lon: 2.3, acc: 10, alt: 30, spd: 5, hdg: nil, bat: 85, ts: 1_609_459_200_000))
        for bad in [
            "{", "[]", #"{"device_id":"1"}"#, #"{"location":{"coords":{"latitude":"48.8","longitude":2.3}}}"#,
            #"{"location":{"timestamp":"noon","coords":{"latitude":48.8,"longitude":2.3}}}"#,
        ] {
            let request = HTTPRequest(
                method: "POST", path: "/v1/ingest/osmand", query: "id=1&key=k", contentType: "application/json",
                body: Array(bad.utf8))
            guard case .failure(.malformed(let reason)) = OsmAndEndpoint.parse(request) else {
                Issue.record("not malformed: \(bad)")
                continue
            }
            #expect(!reason.isEmpty)
        }
    }
}
