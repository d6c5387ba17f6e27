// The admin role over real sockets: the role granted with the real `cairn user grant-admin` beside the running
// hub (no restart); an email registered and used to log in; a connected user suspended by the admin is closed
// with 4503, their login and token are refused `suspended` (a token on the upgrade closes with 4503); after
// `admin.user.unsuspend` the login works again; and the audit log holds both actions.
import CairnApp
import CairnCore
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct AdminTests {
        func grantAdmin(_ username: String, in hub: RunningHub) throws {
            let grant = try TestServerProcess(arguments: ["user", "grant-admin", username, "--data", hub.dataDirectory])
            #expect(try grant.waitForExit(timeout: 60) == 0, "output: \(grant.output)")
            #expect(grant.output.contains("granted admin"))
        }

        @Test func anAdminSuspendsAConnectedUserAndLiftsIt() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (root, _) = try hub.member("root")
            let mallory = try hub.client()
            let registered = try mallory.requestOK(
                "register", ["username": "mallory", "password": "password1", "email": "Mallory@Example.org"])
            let malloryID = try #require((registered["user"] as? [String: Any])?["id"] as? Int)
            let token = try #require(registered["token"] as? String)

            // Forbidden first; granted from the command line while the hub runs; allowed at the next request.
            #expect(errorCode(try root.request("admin.users")) == "forbidden")
            try grantAdmin("root", in: hub)
            let list = try root.requestOK("admin.users", ["q": "mallory@"])
            let row = try #require((list["users"] as? [[String: Any]])?.first)
            #expect(row["username"] as? String == "mallory")
            #expect(row["email"] as? String == "mallory@example.org")

            let suspended = try root.requestOK(
                "admin.user.suspend", ["user": malloryID, "reason": "spam", "for": 3600])
            #expect(
                ((suspended["user"] as? [String: Any])?["suspended"] as? [String: Any])?["reason"] as? String == "spam")
            #expect(try mallory.expectClose(timeout: 10).code == 4503)

            let again = try hub.client()
            let login = try again.request("login", ["username": "mallory@example.org", "password": "password1"])
            #expect(errorCode(login) == "suspended")
            #expect(((login["error"] as? [String: Any])?["message"] as? String)?.contains("spam") == true)
            #expect(errorCode(try again.request("auth", ["token": token])) == "suspended")
            let onUpgrade = try hub.client(headers: ["Authorization": "Bearer \(token)"])
            #expect(try onUpgrade.expectClose(timeout: 10).code == 4503)
            // An upload with the token is refused as suspended (403), not as a bad token.
            let upload = try HTTPClient.post(
                port: hub.port, path: "/v1/media", body: MediaTests.png, contentType: "image/png",
                headers: ["Authorization": "Bearer \(token)"])
            #expect(upload.status == 403 && upload.text.contains("suspended"))

            let lifted = try root.requestOK("admin.user.unsuspend", ["user": malloryID])
            #expect(lifted["lifted"] as? Bool == true)
            let back = try again.request("login", ["username": "mallory", "password": "password1"])
            #expect(back["ok"] as? Bool == true)
            let audit = try root.requestOK("admin.audit")
            let actions = (audit["entries"] as? [[String: Any]] ?? []).compactMap { $0["action"] as? String }
            #expect(actions == ["user.unsuspend", "user.suspend"])
        }

        @Test func grantingAdminToAnUnknownUserFails() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let grant = try TestServerProcess(arguments: ["user", "grant-admin", "nobody", "--data", hub.dataDirectory])
            #expect(try grant.waitForExit(timeout: 60) == 1)
            #expect(grant.output.contains("no user named 'nobody'"), "output: \(grant.output)")
            #expect(try hub.app.store.usernames(withRole: .admin).isEmpty)
        }
    }
}
