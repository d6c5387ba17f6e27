// What one client can hold of the HTTP side, over real sockets: an OwnTracks request with credentials that are not a
// tracker's is refused from its headers, before its body is read or reserved; one address holds at most so many
// connections (loopback counted here, as a hub configured so does); and trackers' reports and uploads each keep a
// part of the body budget the other cannot take.
import CairnApp
import CairnServer
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct HTTPLimitsTests {
        static func upload(_ hub: RunningHub, _ token: String, _ body: [UInt8]) throws -> HTTPResponse {
            try HTTPClient.post(
                port: hub.port, path: "/v1/media", body: body, contentType: "image/jpeg",
                headers: ["Authorization": "Bearer \(token)"], timeout: 20)
        }

        /// An Overland request admitted with its declared `length` reserved, its body not sent yet.
        static func heldBatch(_ hub: RunningHub, key: String, length: Int) throws -> HTTPPartialRequest {
            let held = try HTTPPartialRequest(
                port: hub.port, path: "/v1/ingest/overland",
                headers: [
                    "Authorization": "Bearer \(key)", "Content-Type": "application/json",
                    "Content-Length": "\(length)", "Expect": "100-continue",
                ])
            #expect(try held.interimStatus() == 100)
            return held
        }

        /// An empty Overland batch of exactly `length` bytes.
        static func emptyBatch(_ length: Int) -> [UInt8] {
            let head = #"{"locations":[]"#
            return Array((head + String(repeating: " ", count: length - head.utf8.count - 1) + "}").utf8)
        }

        @Test func ownTracksWithoutATrackersCredentialsIs401BeforeItsBodyIsReadOrReserved() throws {
            let hub = try RunningHub { $0.server.maxBufferedBodyBytes = 600_000 }
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let gear = try hub.bucket(alice.0, "Gear")
            let phone = try hub.activeTracker(alice.0, item: try hub.item(alice.0, bucket: gear, "Bike"), device: "p-1")
            // Strangers declare the largest OwnTracks body and send none of it, with credentials of no tracker, a
            // wrong key for a real device, and a real key under another device id: each is answered 401 at once.
            let wrong = String(repeating: "B", count: 43)
            let strangers = try [("x-1", wrong), ("p-1", wrong), ("x-2", phone.key)].map { device, key in
                try HTTPPartialRequest(
                    port: hub.port, path: "/v1/ingest/owntracks",
                    headers: OwnTracksIngestTests.basic(device, key).merging([
                        "Content-Type": "application/json", "Content-Length": "\(256 * 1024)",
                    ]) { $1 })
            }
            for stranger in strangers {
                let refused = try stranger.response()
                #expect(refused.status == 401)
                #expect(refused.headers["www-authenticate"] != nil)
            }
            // Had they reserved 3 x 256 KiB of the 600,000-byte budget, this report would be 503.
            let ts = Int(Date().timeIntervalSince1970) - 60
            let report = try OwnTracksIngestTests.post(
                hub, #"{"_type":"location","lat":48.85,"lon":2.35,"tst":\#(ts)}"#,
                OwnTracksIngestTests.basic("p-1", phone.key))
            #expect(report.status == 200)
            for stranger in strangers { stranger.abandon() }
        }

        @Test func oneAddressHoldsAtMostSoManyConnections() throws {
            let hub = try RunningHub {
                $0.server.httpConnectionsPerAddress = 2
                $0.server.httpPerAddressCountsLoopback = true
            }
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let gear = try hub.bucket(alice.0, "Gear")
            let car = try hub.activeTracker(alice.0, item: try hub.item(alice.0, bucket: gear, "Car"), device: "c-1")
            let first = try Self.heldBatch(hub, key: car.key, length: 100)
            let second = try Self.heldBatch(hub, key: car.key, length: 100)
            let refused = try HTTPClient.get(port: hub.port, path: "/healthz")
            #expect(refused.status == 429)
            #expect(refused.headers["retry-after"] != nil)
            #expect(refused.text.contains("too many connections"))
            // The WebSocket side has its own limit: an upgrade is not refused by this one.
            #expect(try hub.client().request("guest")["ok"] as? Bool == true)
            // A held connection that finishes frees its place.
            #expect(try first.response(after: Self.emptyBatch(100)).status == 200)
            let deadline = Date().addingTimeInterval(10)
            var status = 0
            while Date() < deadline {
                status = try HTTPClient.get(port: hub.port, path: "/healthz").status
                if status == 200 { break }
                Thread.sleep(forTimeInterval: 0.05)
            }
            #expect(status == 200)
            #expect(try second.response(after: Self.emptyBatch(100)).status == 200)
        }

        @Test func reportsAndUploadsEachKeepTheirPartOfTheBodyBudget() throws {
            let hub = try RunningHub {
                $0.media.maxBytes = 3000
                $0.server.maxBufferedBodyBytes = 4000  // 2000 kept for uploads, 400 for trackers' reports
                $0.server.uploadBodyReservePercent = 50
                $0.server.ingestBodyReservePercent = 10
            }
            defer { hub.removeData() }
            let (alice, token) = try hub.registered("alice")
            let gear = try hub.bucket(alice, "Gear")
            let car = try hub.activeTracker(alice, item: try hub.item(alice, bucket: gear, "Car"), device: "c-1")
            // Trackers hold the ingest's part (4000 - 2000 kept for uploads): one more report waits, an upload does
            // not.
            let batch = try Self.heldBatch(hub, key: car.key, length: 2000)
            let busy = try OverlandIngestTests.post(hub, #"{"locations":[]}"#, key: car.key)
            #expect(busy.status == 503)
            #expect(busy.headers["retry-after"] != nil)
            #expect(try Self.upload(hub, token, MediaTests.jpeg(size: 2000)).status == 201)
            #expect(try batch.response(after: Self.emptyBatch(2000)).status == 200)
            // Uploads hold theirs (4000 - 400 kept for reports): one more upload waits, a report does not.
            var expecting = [
                "Authorization": "Bearer \(token)", "Content-Type": "image/jpeg", "Content-Length": "3000",
            ]
            expecting["Expect"] = "100-continue"
            let held = try HTTPPartialRequest(port: hub.port, path: "/v1/media", headers: expecting)
            #expect(try held.interimStatus() == 100)
            #expect(try Self.upload(hub, token, MediaTests.jpeg(size: 1000, seed: 2)).status == 503)
            #expect(try OverlandIngestTests.post(hub, #"{"locations":[]}"#, key: car.key).status == 200)
            #expect(try held.response(after: MediaTests.jpeg(size: 3000, seed: 3)).status == 201)
        }
    }
}
