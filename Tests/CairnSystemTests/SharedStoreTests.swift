// Two real `cairn serve` processes on one real PostgreSQL database (`--storage-url`), no Redis: what one node
// commits, the other reads. An account registered on one node logs in and authenticates on the other, a username
// taken on one is taken on both, a revoked token is refused everywhere, and a photo uploaded to one node is served
// by the other from a URL the first signed (the signing key and the bytes are in the database).
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite(.enabled(if: PostgresServerProcess.isAvailable, "PostgreSQL is not installed"))
    struct SharedStoreTests {
        static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array("shared photo".utf8)

        final class Node {
            let process: TestServerProcess
            let port: Int
            let data: String

            init(_ name: String, url: String) throws {
                data = NSTemporaryDirectory() + "cairn-shared-\(name)-\(UUID().uuidString)"
                process = try TestServerProcess(arguments: [
                    "serve", "--host", "127.0.0.1", "--port", "0", "--data", data, "--scrypt-cost", "10",
                    "--signups-per-address", "0", "--storage-url", url, "--storage-connections", "2",
                ])
                port = try process.waitForListeningPort(timeout: 60)
            }

            func client() throws -> WebSocketClient { try WebSocketClient(port: port, timeout: 10) }

            deinit {
                process.kill()
                try? FileManager.default.removeItem(atPath: data)
            }
        }

        @Test func accountsTokensAndMediaAreSharedByTheNodes() throws {
            let url = try PostgresServerProcess.freshURL()
            let a = try Node("a", url: url)
            let b = try Node("b", url: url)

            // Registered on A; the name is taken on B too, and the password works there.
            let alice = try a.client()
            let registered = try alice.requestOK("register", ["username": "alice", "password": "password1"])
            let token = try #require(registered["token"] as? String)
            let aliceID = try #require((registered["user"] as? [String: Any])?["id"] as? Int)
            let onB = try b.client()
            let taken = try onB.request("register", ["username": "alice", "password": "password2"])
            #expect(errorCode(taken) == "username_taken", "\(taken)")
            let login = try onB.requestOK("login", ["username": "alice", "password": "password1"])
            #expect((login["user"] as? [String: Any])?["id"] as? Int == aliceID)

            // A's token authenticates on B.
            let bearer = try b.client()
            let authed = try bearer.requestOK("auth", ["token": token])
            #expect((authed["user"] as? [String: Any])?["username"] as? String == "alice")

            // A photo uploaded to A, its URL signed by A, is served by B (bytes fetched from the database).
            let upload = try HTTPClient.post(
                port: a.port, path: "/v1/media", body: Self.png, contentType: "image/png",
                headers: ["Authorization": "Bearer \(token)"], timeout: 20)
            #expect(upload.status == 201, "\(upload.status) \(upload.text)")
            let media = try #require(try upload.jsonObject()["media"] as? String)
            _ = try alice.requestOK("profile.set", ["photo": media])
            let bob = try b.client()
            _ = try bob.requestOK("register", ["username": "bob", "password": "password1"])
            let seen = try #require(bob.requestOK("user.get", ["user": aliceID])["user"] as? [String: Any])
            let photo = try #require(seen["photo_url"] as? String)
            let served = try HTTPClient.get(port: b.port, path: photo)
            #expect(served.status == 200)
            #expect(served.body == Self.png)

            // Logging out on A revokes the token for B as well.
            _ = try alice.requestOK("logout")
            let late = try b.client()
            #expect(errorCode(try late.request("auth", ["token": token])) == "unauthorized")
        }
    }
}
