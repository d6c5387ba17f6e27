// Accounts over a real socket: register, duplicate usernames, wrong passwords, the three ways to present a token,
// logout revoking (one token, or every token of the account), token lifetimes, throttled logins, and the pre-auth
// gate.
import CairnApp
import CairnCore
import CairnSessions
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct AccountFlowTests {
        @Test func registerGivesUserAndToken() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let c = try hub.client()
            let reply = try c.request("register", ["username": "alice", "password": "password1", "name": "Alice"])
            #expect(reply["ok"] as? Bool == true)
            let user = try #require(reply["user"] as? [String: Any])
            #expect(user["username"] as? String == "alice")
            #expect(user["name"] as? String == "Alice")
            #expect(user["id"] is Int)
            #expect((reply["token"] as? String)?.count == 43)
        }

        @Test func duplicateUsernameIsTaken() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            _ = try hub.registered("bob")
            let c = try hub.client()
            let reply = try c.request("register", ["username": "bob", "password": "password2"])
            #expect(reply["ok"] as? Bool == false)
            #expect(errorCode(reply) == "username_taken")
        }

        @Test func wrongPasswordIsLoginFailed() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            _ = try hub.registered("carol")
            let c = try hub.client()
            let reply = try c.request("login", ["username": "carol", "password": "not-the-password"])
            #expect(errorCode(reply) == "invalid_credentials")
            #expect(errorMessage(reply) == "Login failed")
            let ok = try c.request("login", ["username": "carol", "password": "password1"])
            #expect(ok["ok"] as? Bool == true)
        }

        @Test func repeatedFailedLoginsAreRateLimited() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            _ = try hub.registered("dora")
            let c = try hub.client()
            for _ in 0..<5 {
                #expect(
                    errorCode(try c.request("login", ["username": "dora", "password": "wrong-pass"]))
                        == "invalid_credentials")
            }
            let limited = try c.request("login", ["username": "dora", "password": "password1"])
            #expect(errorCode(limited) == "rate_limited")
        }

        @Test func tokenWorksAsAuthOp() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (_, token) = try hub.registered("erin")
            let c = try hub.client()
            let reply = try c.request("auth", ["token": token])
            #expect((reply["user"] as? [String: Any])?["username"] as? String == "erin")
            #expect((try c.request("whoami")["user"] as? [String: Any])?["username"] as? String == "erin")
        }

        @Test func tokenWorksAsBearerHeader() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (_, token) = try hub.registered("fred")
            let c = try hub.client(headers: ["Authorization": "Bearer \(token)"])
            let me = try c.request("whoami")
            #expect((me["user"] as? [String: Any])?["username"] as? String == "fred")
        }

        @Test func tokenWorksAsQueryParameter() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (_, token) = try hub.registered("gina")
            let c = try hub.client(path: "/ws?token=\(token)")
            let me = try c.request("whoami")
            #expect((me["user"] as? [String: Any])?["username"] as? String == "gina")
        }

        @Test func invalidUpgradeTokenClosesWith4500() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let c = try hub.client(headers: ["Authorization": "Bearer \(String(repeating: "A", count: 43))"])
            let close = try c.expectClose(timeout: 10)
            #expect(close.code == 4500)
        }

        @Test func aFailedUpgradeDoesNotLendItsTokenToTheNextConnection() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (_, token) = try hub.registered("victim")
            // Upgrades that carry the token but fail the handshake (no Sec-WebSocket-Key) after the filter saw it.
            for _ in 0..<5 {
                _ = try? HTTPClient.request(
                    method: "GET", port: hub.port, path: "/ws",
                    headers: [
                        "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13",
                        "Authorization": "Bearer \(token)",
                    ], body: [], timeout: 2)
            }
            for _ in 0..<5 {
                let stranger = try hub.client()
                #expect(errorCode(try stranger.request("whoami")) == "unauthorized")
                stranger.close()
            }
        }

        @Test func logoutRevokesTheToken() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (c, token) = try hub.registered("hugo")
            #expect(try c.request("logout")["ok"] as? Bool == true)
            #expect(errorCode(try c.request("whoami")) == "unauthorized")
            let other = try hub.client()
            #expect(errorCode(try other.request("auth", ["token": token])) == "unauthorized")
            let viaHeader = try hub.client(headers: ["Authorization": "Bearer \(token)"])
            #expect(try viaHeader.expectClose(timeout: 10).code == 4500)
        }

        @Test func logoutAllRevokesEveryTokenAndClosesTheOtherSessions() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (phone, first) = try hub.registered("ivan")
            let laptop = try hub.client()
            let login = try laptop.requestOK("login", ["username": "ivan", "password": "password1"])
            let second = try #require(login["token"] as? String)
            let tablet = try hub.client(headers: ["Authorization": "Bearer \(first)"])
            #expect(try tablet.requestOK("whoami")["user"] != nil)
            let (bystander, _) = try hub.registered("vera")

            #expect(try phone.request("logout", ["all": true])["ok"] as? Bool == true)
            for other in [laptop, tablet] {
                let close = try other.expectClose(timeout: 10)
                #expect(close.code == 4500)
                #expect(close.reason == "token revoked")
            }
            // This connection stays open, signed out; both tokens are dead; other accounts are untouched.
            #expect(errorCode(try phone.request("whoami")) == "unauthorized")
            for token in [first, second] {
                #expect(errorCode(try phone.request("auth", ["token": token])) == "unauthorized")
            }
            #expect(try bystander.requestOK("whoami")["user"] != nil)
        }

        @Test func tokensExpireAfterTheirLifetime() throws {
            let clock = ManualClock()
            let hub = try RunningHub(clock: clock) { $0.accounts.tokenLifetimeMs = 3_600_000 }
            defer { hub.removeData() }
            let (_, token) = try hub.registered("tess")
            clock.advance(by: 3_599_000)
            #expect(try hub.client().requestOK("auth", ["token": token])["user"] != nil)
            clock.advance(by: 2_000)
            let late = try hub.client()
            let reply = try late.request("auth", ["token": token])
            #expect(errorCode(reply) == "unauthorized")
            #expect(errorMessage(reply).contains("expired"))
            let onUpgrade = try hub.client(headers: ["Authorization": "Bearer \(token)"])
            #expect(try onUpgrade.expectClose(timeout: 10).code == 4500)
            // A fresh login mints a fresh token.
            let fresh = try #require(
                try late.requestOK("login", ["username": "tess", "password": "password1"])["token"]
                    as? String)
            #expect(try hub.client().requestOK("auth", ["token": fresh])["user"] != nil)
        }

        @Test func guestGetsASession() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let c = try hub.client()
            let reply = try c.request("guest")
            let user = try #require(reply["user"] as? [String: Any])
            #expect((user["username"] as? String)?.hasPrefix("guest-") == true)
            #expect(try c.request("whoami")["ok"] as? Bool == true)
        }

        @Test func opsBeforeAuthenticationAreUnauthorized() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let c = try hub.client()
            #expect(errorCode(try c.request("whoami")) == "unauthorized")
            #expect(errorCode(try c.request("friend.list")) == "unauthorized")
        }
    }
}
