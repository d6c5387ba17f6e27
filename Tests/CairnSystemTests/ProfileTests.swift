// Profiles over real sockets: a photo set with profile.set comes back from user.get as a signed URL that serves
// the uploaded bytes, a user without one points at the placeholder, and the hub serves the placeholder images
// (SVG, cacheable, nosniff) with 404 for other names and 405 for other methods.
import CairnMedia
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct ProfileTests {
        static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array("a profile photo".utf8)

        @Test func userGetShowsASignedPhotoURLThatServesTheBytes() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (alice, token) = try hub.registered("alice")
            let (bob, _) = try hub.member("bob")
            let upload = try HTTPClient.post(
                port: hub.port, path: "/v1/media", body: Self.png, contentType: "image/png",
                headers: ["Authorization": "Bearer \(token)"], timeout: 20)
            #expect(upload.status == 201, "\(upload.status) \(upload.text)")
            let media = try #require(try upload.jsonObject()["media"] as? String)
            let me = try #require(alice.requestOK("whoami")["user"] as? [String: Any])
            let aliceID = try #require(me["id"] as? Int)
            let set = try #require(
                alice.requestOK("profile.set", ["name": "Alice", "bio": "Hello there", "photo": media])["user"]
                    as? [String: Any])
            #expect(set["name"] as? String == "Alice")
            let seen = try #require(bob.requestOK("user.get", ["user": aliceID])["user"] as? [String: Any])
            #expect(seen["bio"] as? String == "Hello there")
            let url = try #require(seen["photo_url"] as? String)
            let served = try HTTPClient.get(port: hub.port, path: url)
            #expect(served.status == 200)
            #expect(served.body == Self.png)
            // Removed: the placeholder instead, and it is served.
            let cleared = try #require(alice.requestOK("profile.set", ["photo": NSNull()])["user"] as? [String: Any])
            #expect(cleared["photo_url"] is NSNull)
            let placeholder = try #require(cleared["placeholder_url"] as? String)
            #expect(try HTTPClient.get(port: hub.port, path: placeholder).status == 200)
            let missing = try bob.request("user.get", ["user": 987_654])
            #expect(errorCode(missing) == "not_found")
        }

        @Test func thePlaceholderImagesAreServed() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            for path in [Placeholders.user, Placeholders.item] {
                let response = try HTTPClient.get(port: hub.port, path: path)
                #expect(response.status == 200, "\(path)")
                #expect(response.headers["content-type"] == "image/svg+xml")
                #expect(response.headers["cache-control"] == "public, max-age=86400")
                #expect(response.headers["x-content-type-options"] == "nosniff")
                #expect(response.text.hasPrefix("<svg "))
            }
            #expect(try HTTPClient.get(port: hub.port, path: "/v1/placeholder/other.svg").status == 404)
            #expect(try HTTPClient.get(port: hub.port, path: "/v1/placeholder").status == 404)
            let delete = try HTTPClient.request(method: "DELETE", port: hub.port, path: Placeholders.user)
            #expect(delete.status == 405)
        }
    }
}
