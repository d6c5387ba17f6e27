import CairnCore
import CairnHub
import CairnHubTestSupport
import CairnLoop
import CairnProtocol
import CairnWire
import Synchronization
import Testing

@testable import CairnSessions

// The hub's request handling, driven through its ports with the test thread as the event loop: envelope replies,
// ordering of several requests in one frame, the pre-auth gate, malformed input, auth deadline, upgrade tokens,
// logout revoking other connections, and the backlog bound.

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct RouterTests {
    @Test func registerRepliesWithUserAndToken() async throws {
        let h = HubHarness()
        h.router.connectionOpened(1, token: nil)
        try await h.send(
            1, #"{"id":5,"op":"register","username":"alice","password":"password1","name":"Alice"}"#, completions: 1)
        let replies = h.outbound.take(1)
        #expect(replies.count == 1)
        #expect(replies[0]["id"] as? Int == 5)
        #expect(replies[0]["ok"] as? Bool == true)
        let user = try #require(replies[0]["user"] as? [String: Any])
        #expect(user["username"] as? String == "alice")
        #expect(user["name"] as? String == "Alice")
        #expect(user["id"] as? Int == 1)
        #expect((replies[0]["token"] as? String)?.utf8.count == 43)
        #expect(h.hub.authenticatedCount == 1)
    }

    @Test func opsBeforeAuthenticationAreUnauthorized() async throws {
        let h = HubHarness()
        h.router.connectionOpened(1, token: nil)
        try await h.send(1, #"{"id":2,"op":"friend.list"}"#)
        let reply = try #require(h.outbound.take(1).first)
        #expect(reply["ok"] as? Bool == false)
        #expect(errorCode(reply) == "unauthorized")
    }

    @Test func unknownOpAfterAuthenticationIsBadRequestNamingTheOp() async throws {
        let h = HubHarness()
        h.router.connectionOpened(1, token: nil)
        _ = try await h.registerAndToken(1, "bob")
        try await h.send(1, #"{"id":3,"op":"teleport"}"#)
        let reply = try #require(h.outbound.take(1).first)
        #expect(errorCode(reply) == "bad_request")
        #expect(((reply["error"] as? [String: Any])?["message"] as? String)?.contains("teleport") == true)
    }

    @Test func requestsInOneFrameAreHandledInOrderEvenAcrossSlowWork() async throws {
        let h = HubHarness()
        h.router.connectionOpened(1, token: nil)
        let token = try await h.registerAndToken(1, "carol")
        h.router.connectionOpened(2, token: nil)
        // auth is slow (store lookup); the op after it must see the authenticated connection.
        try await h.send(
            2, "{\"id\":1,\"op\":\"auth\",\"token\":\"\(token)\"}\n{\"id\":2,\"op\":\"nope\"}", completions: 1)
        let replies = h.outbound.take(2)
        #expect(replies.map { $0["id"] as? Int } == [1, 2])
        #expect(replies[0]["ok"] as? Bool == true)
        #expect(errorCode(replies[1]) == "bad_request")  // not "unauthorized": the auth came first
    }

    @Test func malformedJSONGetsAnErrorEventAndTheConnectionStaysOpen() async throws {
        let h = HubHarness()
        h.router.connectionOpened(1, token: nil)
        try await h.send(1, #"{"op":"login","username":"#)
        try await h.send(1, "[1,2]")
        let events = h.outbound.take(1)
        #expect(events.count == 2)
        #expect(events.allSatisfy { $0["ev"] as? String == "error" && errorCode($0) == "bad_request" })
        #expect(h.outbound.closes[1] == nil)
        #expect(h.hub.connectionCount == 1)
    }

    @Test func anUnparsableRequestWhoseIdCanBeReadGetsAReplyToThatId() async throws {
        let h = HubHarness()
        h.router.connectionOpened(1, token: nil)
        try await h.send(1, #"{"id":7,"op":"pos","lat":1e400,"lon":2}"#)
        try await h.send(1, #"{"op":"login","id":8,"username":"#)
        try await h.send(1, #"{"id":"9","op":"pos","lat":1e400}"#)  // not an id the envelope accepts
        let replies = h.outbound.take(1)
        #expect(replies.count == 3)
        #expect(replies[0]["id"] as? Int == 7 && replies[0]["ok"] as? Bool == false)
        #expect(errorCode(replies[0]) == "bad_request")
        #expect(replies[1]["id"] as? Int == 8 && errorCode(replies[1]) == "bad_request")
        #expect(replies[2]["id"] == nil && replies[2]["ev"] as? String == "error")
    }

    @Test func missingFieldIsBadRequestNamingTheField() async throws {
        let h = HubHarness()
        h.router.connectionOpened(1, token: nil)
        try await h.send(1, #"{"id":9,"op":"login","username":"dave"}"#)
        let reply = try #require(h.outbound.take(1).first)
        #expect(reply["id"] as? Int == 9)
        #expect(errorCode(reply) == "bad_request")
        #expect(((reply["error"] as? [String: Any])?["message"] as? String)?.contains("password") == true)
    }

    @Test func failureWithoutIdIsAnErrorEventNamingTheOp() async throws {
        let h = HubHarness()
        h.router.connectionOpened(1, token: nil)
        try await h.send(1, #"{"op":"login","username":"erin","password":"password1"}"#, completions: 1)
        let event = try #require(h.outbound.take(1).first)
        #expect(event["ev"] as? String == "error")
        #expect(event["op"] as? String == "login")
        #expect(errorCode(event) == "invalid_credentials")
    }

    @Test func unauthenticatedConnectionIsClosedAtTheDeadline() async throws {
        let h = HubHarness()
        h.router.connectionOpened(1, token: nil)
        h.clock.advance(by: 9_999)
        h.hub.tick()
        #expect(h.outbound.closes[1] == nil)
        h.clock.advance(by: 1)
        h.hub.tick()
        #expect(h.outbound.closes[1]?.code == .authTimeout)
    }

    @Test func authenticatedConnectionIsNotClosedAtTheDeadline() async throws {
        let h = HubHarness()
        h.router.connectionOpened(1, token: nil)
        _ = try await h.registerAndToken(1, "fred")
        h.clock.advance(by: 60_000)
        h.hub.tick()
        #expect(h.outbound.closes[1] == nil)
    }

    @Test func invalidUpgradeTokenClosesWith4500() async throws {
        let h = HubHarness()
        h.router.connectionOpened(1, token: String(repeating: "A", count: 43))
        try await h.scheduler.run()
        #expect(h.outbound.closes[1]?.code == .invalidToken)
    }

    @Test func validUpgradeTokenAuthenticatesSilently() async throws {
        let h = HubHarness()
        h.router.connectionOpened(1, token: nil)
        let token = try await h.registerAndToken(1, "gail")
        h.router.connectionOpened(2, token: token)
        try await h.scheduler.run()
        #expect(h.outbound.take(2).isEmpty)
        #expect(h.outbound.closes[2] == nil)
        #expect(h.hub.authenticatedCount == 2)
    }

    @Test func logoutRevokesAndClosesOtherConnectionsUsingTheToken() async throws {
        let h = HubHarness()
        h.router.connectionOpened(1, token: nil)
        let token = try await h.registerAndToken(1, "hugo")
        h.router.connectionOpened(2, token: token)
        try await h.scheduler.run()
        try await h.send(1, #"{"id":4,"op":"logout"}"#, completions: 1)
        #expect(h.outbound.take(1).first?["ok"] as? Bool == true)
        #expect(h.outbound.closes[2]?.code == .invalidToken)
        // The logged-out connection is back to the pre-auth gate.
        try await h.send(1, #"{"id":5,"op":"anything"}"#)
        #expect(errorCode(h.outbound.take(1).first ?? [:]) == "unauthorized")
        // And the token no longer works.
        h.router.connectionOpened(3, token: nil)
        try await h.send(3, "{\"id\":1,\"op\":\"auth\",\"token\":\"\(token)\"}", completions: 1)
        #expect(errorCode(h.outbound.take(3).first ?? [:]) == "unauthorized")
    }

    @Test func logoutFollowedByCloseStillClosesOtherConnectionsOfTheToken() async throws {
        let h = HubHarness()
        h.router.connectionOpened(1, token: nil)
        let token = try await h.registerAndToken(1, "ivy")
        h.router.connectionOpened(2, token: token)
        try await h.scheduler.run()
        try await h.send(1, #"{"id":4,"op":"logout"}"#)
        h.router.connectionClosed(1)
        try await h.settle()  // the logout and whatever the close started
        #expect(h.outbound.closes[2]?.code == .invalidToken)
    }

    @Test func anAuthRacingALogoutOfTheSameTokenDoesNotBind() async throws {
        let h = HubHarness()
        h.router.connectionOpened(1, token: nil)
        let token = try await h.registerAndToken(1, "kira")
        h.router.connectionOpened(2, token: nil)
        // Both start before either finishes; whichever order the store sees them in, 2 must not end up logged in.
        try await h.send(2, "{\"id\":1,\"op\":\"auth\",\"token\":\"\(token)\"}")
        try await h.send(1, #"{"id":2,"op":"logout"}"#)
        try await h.scheduler.run(atLeast: 2)
        #expect(h.hub.authenticatedCount == 0)
        // And a completion that arrives after the revocation is refused outright.
        h.hub.sessions.rememberRevoked(token)
        h.router.connectionOpened(3, token: token)
        try await h.scheduler.run()
        #expect(h.outbound.closes[3]?.code == .invalidToken)
        #expect(h.hub.authenticatedCount == 0)
    }

    @Test func upgradeTokenCheckFailingForStorageReasonsIsRetryable() async throws {
        let h = HubHarness()
        h.router.connectionOpened(1, token: nil)
        let token = try await h.registerAndToken(1, "jack")
        h.store.state.withLock { $0.failReads = true }
        h.router.connectionOpened(2, token: token)
        try await h.scheduler.run()
        #expect(h.outbound.closes[2]?.code == .tryAgainLater)
        #expect(h.outbound.closes[2]?.code.mayReconnect == true)
    }

    @Test func backlogBeyondTheLimitIsRateLimited() async throws {
        let h = HubHarness { $0.maxBacklog = 2 }
        h.router.connectionOpened(1, token: nil)
        let lines = [#"{"id":1,"op":"guest"}"#] + (2...5).map { "{\"id\":\($0),\"op\":\"nope\"}" }
        try await h.send(1, lines.joined(separator: "\n"), completions: 1)
        let replies = h.outbound.take(1)
        let byID = Dictionary(uniqueKeysWithValues: replies.compactMap { r in (r["id"] as? Int).map { ($0, r) } })
        #expect(byID[4].flatMap(errorCode) == "rate_limited")
        #expect(byID[5].flatMap(errorCode) == "rate_limited")
        #expect(byID[1]?["ok"] as? Bool == true)
        // The two that fit waited for the guest session and were then handled as authenticated requests.
        #expect(byID[2].flatMap(errorCode) == "bad_request")
        #expect(byID[3].flatMap(errorCode) == "bad_request")
    }

    @Test func backlogIsBoundedInBytesToo() async throws {
        let h = HubHarness { $0.maxBacklogBytes = 1000 }
        h.router.connectionOpened(1, token: nil)
        let padding = String(repeating: "p", count: 600)
        let lines = [
            #"{"id":1,"op":"guest"}"#,
            #"{"id":2,"op":"nope","pad":"\#(padding)"}"#, #"{"id":3,"op":"nope","pad":"\#(padding)"}"#,
        ]
        try await h.send(1, lines.joined(separator: "\n"), completions: 1)
        let byID = Dictionary(
            uniqueKeysWithValues: h.outbound.take(1).compactMap { r in (r["id"] as? Int).map { ($0, r) } })
        #expect(byID[2].flatMap(errorCode) == "bad_request")  // fitted in the backlog, handled after the guest session
        #expect(byID[3].flatMap(errorCode) == "rate_limited")  // would have taken the backlog past 1000 bytes
    }

    @Test func shutdownWaitsForWorkInFlight() async throws {
        let h = HubHarness()
        h.router.connectionOpened(1, token: nil)
        try await h.send(1, #"{"id":1,"op":"guest"}"#)
        var done = false
        h.hub.beginShutdown { done = true }
        #expect(!done)
        try await h.scheduler.run()
        #expect(done)
        #expect(h.outbound.take(1).first?["ok"] as? Bool == true)  // the reply went out before shutdown completed
    }
}
