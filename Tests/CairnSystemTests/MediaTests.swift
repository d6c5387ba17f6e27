// Media over real HTTP on the hub's port: uploads (auth, type, magic bytes, size limits, deduplication), serving
// through signed URLs (exact bytes, tampering, expiry, missing media), the transport's body limits and clean-up
// after clients that hang up, and that acknowledged media survives a restart on the same data directory.
import CairnApp
import CairnCore
import CairnCrypto
import CairnMedia
import CairnServer
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct MediaTests {
        static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array("not really a picture".utf8)

        /// A JPEG-looking body of `size` bytes whose content depends on `seed`.
        static func jpeg(size: Int, seed: UInt8 = 1) -> [UInt8] {
            var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0]
            var x = UInt32(seed) &* 2_654_435_761 | 1
            while bytes.count < size {
                x ^= x << 13
                x ^= x >> 17
                x ^= x << 5
                bytes.append(UInt8(truncatingIfNeeded: x))
            }
            return bytes
        }

        static func hex(_ bytes: [UInt8]) -> String {
            bytes.map { String(format: "%02x", $0) }.joined()
        }

        func upload(_ hub: RunningHub, token: String?, body: [UInt8], type: String = "image/png") throws -> HTTPResponse
        {
            var headers: [String: String] = [:]
            if let token { headers["Authorization"] = "Bearer \(token)" }
            return try HTTPClient.post(
                port: hub.port, path: "/v1/media", body: body, contentType: type,
                headers: headers, timeout: 20)
        }

        func uploadedID(_ hub: RunningHub, token: String, body: [UInt8], type: String = "image/png") throws -> String {
            let response = try upload(hub, token: token, body: body, type: type)
            #expect(response.status == 201, "\(response.status) \(response.text)")
            return try #require(try response.jsonObject()["media"] as? String)
        }

        func mediaFiles(_ hub: RunningHub) -> [String] {
            let root = hub.dataDirectory + "/media"
            let shards = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
            return shards.filter { $0.count == 2 }.flatMap { shard in
                ((try? FileManager.default.contentsOfDirectory(atPath: root + "/" + shard)) ?? []).map {
                    shard + "/" + $0
                }
            }.sorted()
        }

        func link(_ hub: RunningHub, _ id: String, issuedAt: Int64 = SystemClock().now()) -> String {
            hub.app.mediaLinks.url(for: id, now: issuedAt)
        }

        @Test func uploadAnswers201WithTheContentHash() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (_, token) = try hub.registered("alice")
            let response = try upload(hub, token: token, body: Self.png)
            #expect(response.status == 201)
            #expect(response.reason == "Created")
            #expect(response.headers["content-type"] == "application/json")
            let id = try #require(try response.jsonObject()["media"] as? String)
            #expect(id == Self.hex(Digest.sha256(Self.png)))
            #expect(mediaFiles(hub) == [String(id.prefix(2)) + "/" + id])
        }

        @Test func sameBytesTwiceGiveTheSameIDAndOneFile() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (_, alice) = try hub.registered("alice")
            let (_, bob) = try hub.registered("bob")
            let first = try uploadedID(hub, token: alice, body: Self.png)
            let second = try uploadedID(hub, token: alice, body: Self.png)
            let third = try uploadedID(hub, token: bob, body: Self.png)
            #expect(first == second && second == third)
            #expect(mediaFiles(hub).count == 1)
        }

        @Test func guestsMayUpload() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let c = try hub.client()
            let token = try #require(try c.requestOK("guest", [:])["token"] as? String)
            #expect(try upload(hub, token: token, body: Self.png).status == 201)
        }

        @Test func missingOrBadTokenIs401() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let missing = try upload(hub, token: nil, body: Self.png)
            #expect(missing.status == 401)
            #expect(try missing.jsonObject()["error"] is String)
            #expect(try upload(hub, token: String(repeating: "A", count: 43), body: Self.png).status == 401)
            #expect(try upload(hub, token: "garbage", body: Self.png).status == 401)
            let basic = try HTTPClient.post(
                port: hub.port, path: "/v1/media", body: Self.png, contentType: "image/png",
                headers: ["Authorization": "Basic YWxpY2U6cHc="])
            #expect(basic.status == 401)
            #expect(mediaFiles(hub).isEmpty)
        }

        @Test func unacceptedTypeOrMismatchedBytesIs415() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (_, token) = try hub.registered("alice")
            #expect(try upload(hub, token: token, body: Self.png, type: "image/gif").status == 415)
            #expect(try upload(hub, token: token, body: Array("<html>".utf8), type: "text/html").status == 415)
            let mismatch = try upload(hub, token: token, body: Self.png, type: "image/jpeg")
            #expect(mismatch.status == 415)
            #expect(try upload(hub, token: token, body: Array("<svg/>".utf8), type: "image/png").status == 415)
            #expect(mediaFiles(hub).isEmpty)
            #expect(try upload(hub, token: token, body: Self.jpeg(size: 100), type: "image/jpeg").status == 201)
        }

        @Test func bodyOverTheLimitIs413() throws {
            let hub = try RunningHub { $0.media.maxBytes = 1024 }
            defer { hub.removeData() }
            let (_, token) = try hub.registered("alice")
            let over = try upload(hub, token: token, body: Self.jpeg(size: 4096), type: "image/jpeg")
            #expect(over.status == 413)
            #expect(try upload(hub, token: token, body: Self.jpeg(size: 1024), type: "image/jpeg").status == 201)
            // A huge declared length is refused from the header alone, before any body is sent.
            let declared = try HTTPPartialRequest(
                port: hub.port, path: "/v1/media",
                headers: [
                    "Authorization": "Bearer \(token)", "Content-Type": "image/jpeg", "Content-Length": "\(1 << 30)",
                ])
            #expect(try declared.response().status == 413)
            #expect(mediaFiles(hub).count == 1)
        }

        @Test func signedURLServesTheExactBytes() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (_, token) = try hub.registered("alice")
            // Large enough to take many writable callbacks.
            let body = Self.jpeg(size: 700_000, seed: 3)
            let id = try uploadedID(hub, token: token, body: body, type: "image/jpeg")
            let response = try HTTPClient.get(port: hub.port, path: link(hub, id), timeout: 20)
            #expect(response.status == 200)
            #expect(response.body == body)
            #expect(response.headers["content-type"] == "image/jpeg")
            #expect(response.headers["x-content-type-options"] == "nosniff")
            let cache = try #require(response.headers["cache-control"])
            #expect(cache.hasPrefix("private, max-age="))
            let maxAge = try #require(Int(cache.dropFirst("private, max-age=".count)))
            #expect(maxAge > 0 && maxAge <= 600)
            let head = try HTTPClient.request(method: "HEAD", port: hub.port, path: link(hub, id))
            #expect(head.status == 200)
            #expect(head.headers["content-length"] == "\(body.count)")
            #expect(head.headers["content-type"] == "image/jpeg")
        }

        @Test func tamperedOrExpiredURLIs403() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (_, token) = try hub.registered("alice")
            let id = try uploadedID(hub, token: token, body: Self.png)
            let other = try uploadedID(hub, token: token, body: Self.jpeg(size: 64), type: "image/jpeg")
            let url = link(hub, id)
            #expect(try HTTPClient.get(port: hub.port, path: url).status == 200)

            let sigStart = try #require(url.range(of: "sig=")).upperBound
            var tampered = url
            tampered.replaceSubrange(sigStart..<url.index(after: sigStart), with: url[sigStart] == "A" ? "B" : "A")
            #expect(try HTTPClient.get(port: hub.port, path: tampered).status == 403)
            let swapped = url.replacingOccurrences(of: id, with: other)
            #expect(try HTTPClient.get(port: hub.port, path: swapped).status == 403)
            let noQuery = String(url.prefix { $0 != "?" })
            let refused = try HTTPClient.get(port: hub.port, path: noQuery)
            #expect(refused.status == 403)
            #expect(try refused.jsonObject()["error"] is String)
            // Issued long enough ago that it has run out.
            let expired = link(hub, id, issuedAt: SystemClock().now() - 700_000)
            #expect(try HTTPClient.get(port: hub.port, path: expired).status == 403)
        }

        @Test func signedURLForUnknownMediaIs404() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let response = try HTTPClient.get(port: hub.port, path: link(hub, String(repeating: "e", count: 64)))
            #expect(response.status == 404)
        }

        @Test func mediaAndItsLinksSurviveARestart() throws {
            let first = try RunningHub()
            defer { first.removeData() }
            let (_, token) = try first.registered("alice")
            let body = Self.jpeg(size: 50_000, seed: 9)
            let id = try uploadedID(first, token: token, body: body, type: "image/jpeg")
            let url = link(first, id)
            try first.stop()

            let second = try RunningHub(dataDirectory: first.dataDirectory)
            let response = try HTTPClient.get(port: second.port, path: url)
            #expect(response.status == 200)
            #expect(response.body == body)
            try second.stop()
        }

        @Test func busyUploadBudgetIs503WithRetryAfter() throws {
            let hub = try RunningHub {
                $0.media.maxBytes = 3000
                $0.server.maxBufferedBodyBytes = 4000
            }
            defer { hub.removeData() }
            let (_, token) = try hub.registered("alice")
            let headers = ["Authorization": "Bearer \(token)", "Content-Type": "image/jpeg", "Content-Length": "3000"]
            let body = Self.jpeg(size: 3000)
            // The held upload asks to hear first: its `100 Continue` says it was admitted and its 3000 bytes are
            // reserved (admission checks the token off the loop, so only then is the order certain).
            var expecting = headers
            expecting["Expect"] = "100-continue"
            let held = try HTTPPartialRequest(port: hub.port, path: "/v1/media", headers: expecting)
            #expect(try held.interimStatus() == 100)
            let deadline = Date().addingTimeInterval(10)
            var busy: HTTPResponse?
            while Date() < deadline {
                let second = try upload(hub, token: token, body: body, type: "image/jpeg")
                if second.status == 503 {
                    busy = second
                    break
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
            let refused = try #require(busy)
            #expect(refused.headers["retry-after"] != nil)
            // The held upload still completes.
            #expect(try held.response(after: body).status == 201)
        }

        @Test func uploadsWithoutAValidTokenAre401BeforeTheirBodyIsReadOrReserved() throws {
            let hub = try RunningHub {
                $0.media.maxBytes = 3000
                $0.server.maxBufferedBodyBytes = 4000
            }
            defer { hub.removeData() }
            let (_, token) = try hub.registered("alice")
            let body = Self.jpeg(size: 3000, seed: 9)
            // Three uploads that declare 3000 bytes each and send none, with no token or a bad one: if any of them
            // reserved its bytes of the 4000-byte budget, the real upload below would be refused with 503.
            let strangers = try [nil, "garbage", String(repeating: "A", count: 43)].map { bad in
                var headers = ["Content-Type": "image/jpeg", "Content-Length": "3000"]
                if let bad { headers["Authorization"] = "Bearer \(bad)" }
                return try HTTPPartialRequest(port: hub.port, path: "/v1/media", headers: headers, body: [])
            }
            for stranger in strangers {
                let refused = try stranger.response()  // answered without a byte of the body having been sent
                #expect(refused.status == 401)
                #expect(refused.headers["www-authenticate"] != nil)
            }
            #expect(try upload(hub, token: token, body: body, type: "image/jpeg").status == 201)
            for stranger in strangers { stranger.abandon() }
        }

        @Test func aBodyThatTakesTooLongIs408AndGivesItsBudgetBack() throws {
            let hub = try RunningHub {
                $0.media.maxBytes = 3000
                $0.server.maxBufferedBodyBytes = 4000
                $0.server.bodyTimeoutSeconds = 1
            }
            defer { hub.removeData() }
            let (_, token) = try hub.registered("alice")
            let headers = ["Authorization": "Bearer \(token)", "Content-Type": "image/jpeg", "Content-Length": "3000"]
            let body = Self.jpeg(size: 3000, seed: 3)
            let slow = try HTTPPartialRequest(
                port: hub.port, path: "/v1/media", headers: headers,
                body: Array(body.prefix(10)))
            // The sweep runs once a second: the trickling upload is refused within the bound plus a sweep or two.
            let refused = try slow.response()
            #expect(refused.status == 408)
            slow.abandon()
            #expect(try upload(hub, token: token, body: body, type: "image/jpeg").status == 201)
        }

        @Test func clientsThatHangUpLeaveNothingBehind() throws {
            let hub = try RunningHub {
                $0.media.maxBytes = 3000
                $0.server.maxBufferedBodyBytes = 4000
            }
            defer { hub.removeData() }
            let (_, token) = try hub.registered("alice")
            let headers = ["Authorization": "Bearer \(token)", "Content-Type": "image/jpeg", "Content-Length": "3000"]
            let body = Self.jpeg(size: 3000, seed: 5)
            // Each abandoned upload reserved 3000 of the 4000-byte budget; if any reservation leaked, every later
            // upload would be refused with 503.
            for _ in 0..<5 {
                let partial = try HTTPPartialRequest(
                    port: hub.port, path: "/v1/media", headers: headers,
                    body: Array(body.prefix(1000)))
                partial.abandon()
            }
            let deadline = Date().addingTimeInterval(10)
            var status = 0
            while Date() < deadline {
                status = try upload(hub, token: token, body: body, type: "image/jpeg").status
                if status == 201 { break }
                Thread.sleep(forTimeInterval: 0.05)
            }
            #expect(status == 201)
            #expect(mediaFiles(hub).count == 1)
            let temporaries = try FileManager.default.contentsOfDirectory(atPath: hub.dataDirectory + "/media/tmp")
            #expect(temporaries.isEmpty)
            #expect(try hub.health()["status"] as? String == "ok")
        }

        @Test func unreferencedUploadsAreCollectedPeriodically() throws {
            let hub = try RunningHub {
                $0.media.garbagePeriodMs = 50
                $0.media.garbageGraceMs = 0
            }
            defer { hub.removeData() }
            let (_, token) = try hub.registered("alice")
            let id = try uploadedID(hub, token: token, body: Self.png)
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline && !mediaFiles(hub).isEmpty { Thread.sleep(forTimeInterval: 0.05) }
            #expect(mediaFiles(hub).isEmpty)
            #expect(try HTTPClient.get(port: hub.port, path: link(hub, id)).status == 404)
        }

        @Test func otherMethodsAre405() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            #expect(try HTTPClient.request(method: "DELETE", port: hub.port, path: "/v1/media").status == 405)
        }
    }
}
