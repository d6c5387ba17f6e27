// The per-tracker request budget over real HTTP, for the three ingest formats: past the burst a tracker is answered
// 429 with `Retry-After` in seconds and nothing is stored, and the budget comes back with time. Strangers learn
// nothing about device ids: an unknown device and a known one with a wrong key get the same status and body.
import CairnApp
import CairnCore
import CairnTestSupport
import CairnTrackers
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct IngestRateLimitTests {
        @Test func pastItsBurstEachFormatIsAnswered429WithRetryAfterAndStoresNothing() async throws {
            let clock = ManualClock(start: SystemClock().now())
            let hub = try RunningHub(clock: clock) {
                $0.hub.ingestRequestsPerSecond = 0.5
                $0.hub.ingestRequestBurst = 2
            }
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let gear = try hub.bucket(alice.0, "Gear")
            let osmand = try hub.activeTracker(
                alice.0, item: try hub.item(alice.0, bucket: gear, "Bike"), device: "o-1")
            let owntracks = try hub.activeTracker(
                alice.0, item: try hub.item(alice.0, bucket: gear, "Bag"), device: "t-1")
            let overland = try hub.activeTracker(
                alice.0, item: try hub.item(alice.0, bucket: gear, "Car"), device: "l-1")
            var now = Int(clock.now() / 1000) - 100
            func viaOsmAnd() throws -> HTTPResponse {
                now += 1
                return try HTTPClient.get(
                    port: hub.port,
                    path: "/v1/ingest/osmand?id=o-1&key=\(osmand.key)&lat=48.85&lon=2.35&timestamp=\(now)")
            }
            func viaOwnTracks() throws -> HTTPResponse {
                now += 1
                return try OwnTracksIngestTests.post(
                    hub, #"{"_type":"location","lat":48.85,"lon":2.35,"tst":\#(now)}"#,
                    OwnTracksIngestTests.basic("t-1", owntracks.key))
            }
            func viaOverland() throws -> HTTPResponse {
                now += 1
                let body =
                    #"{"locations":["# + OverlandIngestTests.point(2.35, 48.85, OverlandIngestTests.iso(now)) + "]}"
                return try OverlandIngestTests.post(hub, body, key: overland.key)
            }
            for (send, tracker) in [(viaOsmAnd, osmand.id), (viaOwnTracks, owntracks.id), (viaOverland, overland.id)] {
                #expect(try send().status == 200)
                #expect(try send().status == 200)
                let stored = try await hub.app.store.trackerFix(tracker: Int64(tracker))
                let refused = try send()
                #expect(refused.status == 429 && refused.reason == "Too Many Requests")
                #expect(refused.headers["retry-after"] == "2")  // a token every 2 s
                #expect(try await hub.app.store.trackerFix(tracker: Int64(tracker)) == stored)
            }
            clock.advance(by: 2000)
            #expect(try viaOsmAnd().status == 200)
            #expect(try viaOwnTracks().status == 200)
            #expect(try viaOverland().status == 200)
        }

        @Test func anUnknownDeviceAndAWrongKeyAreAnsweredAlike() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let gear = try hub.bucket(alice.0, "Gear")
            _ = try hub.activeTracker(alice.0, item: try hub.item(alice.0, bucket: gear, "Bike"), device: "taken-1")
            let wrongKey = String(repeating: "B", count: 43)
            let ts = Int(Date().timeIntervalSince1970) - 60
            func osmand(_ device: String) throws -> HTTPResponse {
                try HTTPClient.get(
                    port: hub.port, path: "/v1/ingest/osmand?id=\(device)&key=\(wrongKey)&lat=1&lon=2&timestamp=\(ts)")
            }
            func owntracks(_ device: String) throws -> HTTPResponse {
                try OwnTracksIngestTests.post(
                    hub, #"{"_type":"location","lat":1,"lon":2,"tst":\#(ts)}"#,
                    OwnTracksIngestTests.basic(device, wrongKey))
            }
            for send in [osmand, owntracks] {
                let taken = try send("taken-1")
                let free = try send("free-1")
                #expect(taken.status == 401)
                #expect(free.status == taken.status)
                #expect(free.body == taken.body)
                #expect(free.headers["www-authenticate"] == taken.headers["www-authenticate"])
            }
        }
    }
}
