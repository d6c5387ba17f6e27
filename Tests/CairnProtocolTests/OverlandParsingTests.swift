import CairnCore
import CairnHub
import CairnHubTestSupport
import CairnLoop
import CairnTestSupport
import Synchronization
import Testing

@testable import CairnProtocol
// Reading Overland batches, with the body of Overland's README (aaronpk/Overland-iOS, "API"): `Authorization: Bearer`,
// GeoJSON points at [lon, lat] with ISO 8601 timestamps, speed in m/s, battery 0...1, -1 left out; `current` beside
// the batch; and a whole batch refused, naming the point, when any point is malformed. Then the endpoint over the hub
// with in-memory stores: the key alone finds the tracker, `{"result":"ok"}` only after the commit, 503 on a failed
// write with nothing applied.
@testable import CairnTrackers

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct OverlandParsingTests {
    /// Overland's README example, as the app posts it.
    static let readme = AppExamples.overlandReadme

    static func point(_ lon: Double, _ lat: Double, _ time: String, extra: String = "") -> String {
        #"{"type":"Feature","geometry":{"type":"Point","coordinates":[\#(lon),\#(lat)]},"#
            + #""properties":{"timestamp":"\#(time)"\#(extra)}}"#
    }

    func parse(_ body: String, auth: String? = "Bearer k3y") throws(IngestProblem) -> OverlandBatch {
        try OverlandRequest.parse(authorization: auth, body: Array(body.utf8))
    }

    @Test func theReadmeExample() throws {
        let batch = try parse(Self.readme)
        #expect(batch.key == "k3y")
        #expect(
            batch.fixes == [
                IngestFix(lat: 37.3318, lon: -122.030581, acc: 30, alt: 0, spd: 4, bat: 89, ts: 1_443_711_600_000)
            ])
        #expect(batch.current == nil)
    }

    @Test func batchesCurrentAndUnknownValues() throws {
        let body =
            #"{"locations":[\#(Self.point(2, 1, "2021-01-01T00:00:10Z")),"#
            + #"\#(Self.point(4, 3, "2021-01-01T00:00:00Z", extra: #","speed":-1,"course":360,"battery_level":-1"#))],"#
            + #""current":\#(Self.point(6, 5, "2021-01-01T00:00:20.5Z")),"trip":{"distance":12,"mode":"bicycle"}}"#
        let batch = try parse(body)
        #expect(
            batch.fixes == [
                IngestFix(lat: 1, lon: 2, ts: 1_609_459_210_000),
                IngestFix(lat: 3, lon: 4, hdg: 0, ts: 1_609_459_200_000),
            ])
        #expect(batch.current == IngestFix(lat: 5, lon: 6, ts: 1_609_459_220_500))
        #expect(try parse(#"{"locations":[]}"#).fixes == [])
        #expect(OverlandRequest.bearer("bearer  abc") == "abc")
        for auth in [nil, "Bearer", "Bearer ", "Basic abc", "Token abc"] {
            #expect(throws: IngestProblem.badCredentials) { try parse(#"{"locations":[]}"#, auth: auth) }
        }
    }

    @Test func aMalformedPointRefusesTheBatchNamingIt() {
        let good = Self.point(2, 1, "2021-01-01T00:00:00Z")
        #expect(OverlandRequest.maxPoints == TrackerIngest.batchLimit)
        let tooMany =
            #"{"locations":["# + Array(repeating: "{}", count: OverlandRequest.maxPoints + 1).joined(separator: ",")
            + "]}"
        let cases: [(String, String)] = [
            ("{", "not an Overland batch"), ("[]", "not an Overland batch"), (#"{"trip":{}}"#, "missing 'locations'"),
            (#"{"locations":{}}"#, "'locations'"), (#"{"locations":[1]}"#, "'locations'"),
            (#"{"locations":[\#(good),\#(Self.point(2, 1, "noon"))]}"#, "point 2"),
            (#"{"locations":[\#(good),{"type":"Feature","properties":{"timestamp":"2021"}}]}"#, "point 2"),
            (#"{"locations":[{"type":"Feature","geometry":{"type":"LineString","coordinates":[1,2]}}]}"#, "point 1"),
            (#"{"locations":[{"geometry":{"type":"Point","coordinates":[1]},"properties":{}}]}"#, "point 1"),
            (#"{"locations":[{"geometry":{"type":"Point","coordinates":["1",2]},"properties":{}}]}"#, "point 1"),
            (#"{"locations":[{"geometry":{"type":"Point","coordinates":[1,2]},"properties":{}}]}"#, "timestamp"),
            (#"{"locations":[\#(Self.point(2, 1, "2021-01-01T00:00:00Z", extra: #","speed":"fast""#))]}"#, "point 1"),
            (#"{"locations":[\#(good)],"current":{"geometry":null}}"#, "'current'"),
            (tooMany, "more than \(OverlandRequest.maxPoints)"),
        ]
        for (body, named) in cases {
            do {
                _ = try parse(body)
                Issue.record("accepted: \(body)")
            } catch {
                guard case .malformed(let reason) = error else {
                    Issue.record("not malformed: \(body)")
                    continue
                }
                #expect(reason.contains(named), "\(body): \(reason)")
            }
        }
    }

    @Test func theKeyAloneFindsTheTrackerAndOkComesOnlyAfterTheCommit() async throws {
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
        let endpoint = OverlandEndpoint(ingest: h.hub.trackerIngest, lookup: h.hub.trackerLookup)
        func send(_ body: String, key: String) async -> (Int, String) {
            let request = HTTPRequest(
                method: "POST", path: "/v1/ingest/overland", authorization: "Bearer \(key)",
                contentType: "application/json", body: Array(body.utf8))
            if let refused = await endpoint.admit(request) {
                return (refused.status, "admit")
            }
            let reply = await endpoint.handle(request)
            guard case .bytes(let bytes) = reply.body else { return (reply.status, "") }
            return (reply.status, String(decoding: bytes, as: UTF8.self))
        }
        #expect(await send(Self.readme, key: key).0 == 403)  // paired, not yet active
        _ = try await h.request(
            1, #"{"id":7,"op":"tracker.activate","tracker":\#(tracker["id"] as? Int ?? 0)}"#, id: 7, completions: 1)
        #expect(await send(Self.readme, key: key + "x").0 == 401)
        h.trackers.state.withLock { $0.failWrites = true }
        #expect(await send(Self.readme, key: key).0 == 503)
        h.trackers.state.withLock { $0.failWrites = false }
        #expect(h.trackers.state.withLock { $0.fixes.isEmpty })
        let ok = await send(Self.readme, key: key)
        #expect(ok.0 == 200 && ok.1 == #"{"result":"ok"}"#)
        #expect(h.trackers.state.withLock { $0.fixes.values.first?.lat } == 37.3318)
        // `current` repeating the batch's newest point is not sent again (it would count as a duplicate).
        let point = Self.point(2, 1, "2021-01-01T00:00:00Z")
        let repeated = await send(#"{"locations":[\#(point)],"current":\#(point)}"#, key: key)
        #expect(repeated.0 == 200 && h.hub.trackerIngest.counts.dropped[.duplicate, default: 0] == 0)
        #expect(await endpoint.admit(HTTPRequest(method: "PUT", path: "/v1/ingest/overland"))?.status == 405)
        let refusedBefore = h.hub.trackerIngest.counts.refused
        let noKey = await endpoint.admit(HTTPRequest(method: "POST", path: "/v1/ingest/overland"))
        #expect(noKey?.status == 401)
        #expect(await send(Self.readme, key: key + "x").0 == 401)  // refused by the lookup, in admit
        #expect(await send("{", key: key).0 == 400)
        // Every refusal is counted once, wherever it was made: the missing key, the unknown key, the broken body.
        let refused = h.hub.trackerIngest.counts.refused
        #expect(refused["credentials", default: 0] - refusedBefore["credentials", default: 0] == 2)
        #expect(refused["malformed", default: 0] - refusedBefore["malformed", default: 0] == 1)
        #expect(noKey?.headers.first { $0.name == "WWW-Authenticate" }?.value.hasPrefix("Bearer") == true)
    }
}
