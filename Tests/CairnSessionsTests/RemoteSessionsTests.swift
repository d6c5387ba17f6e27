// Logouts and suspensions across nodes, through the `RemoteSessions` seam. A logout here tells the port the token's
// fingerprint (never the token), a logout everywhere and a suspension tell it the user; what other nodes committed
// ends the matching sessions here as a local logout or suspension does: only the connections that used the revoked
// token, or every connection of the user, with the same reason; and a check of that token still in flight cannot
// bind it afterwards.
import CairnCrypto
import CairnHub
import CairnHubTestSupport
import CairnLoop
import Synchronization
import Testing

@testable import CairnCore
@testable import CairnSessions

/// Records what Sessions handed to other nodes.
final class RecordingSessions: RemoteSessions {
    var log: [String] = []
    func tokenRevoked(user: Int64, fingerprint: TokenFingerprint) {
        log.append("token \(user) \(fingerprint == TokenFingerprint(token: "token-1") ? "token-1" : "other")")
    }
    func sessionsEnded(user: Int64, why: SessionEnd) { log.append("ended \(user) \(why)") }
}

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct RemoteSessionsTests {
    @Test func aFingerprintIsStableAndTellsTokensApart() {
        #expect(TokenFingerprint(token: "abc") == TokenFingerprint(token: "abc"))
        #expect(TokenFingerprint(token: "abc") != TokenFingerprint(token: "abd"))
        let print = TokenFingerprint(token: "abc")
        #expect(TokenFingerprint(high: print.high, low: print.low) == print)
    }

    @Test func logoutsHereAreToldWithTheFingerprintOrTheUser() async throws {
        let h = DomainHarness()
        try await h.makeUsers(2)
        let remote = RecordingSessions()
        h.hub.sessions.remoteSessions = remote
        h.connect(1, as: 1)
        h.connect(2, as: 2)
        _ = try await outcome(h) { h.hub.sessions.logout(1, $0) }.get()
        _ = try await outcome(h) { h.hub.sessions.logout(2, everywhere: true, $0) }.get()
        #expect(remote.log == ["token 1 token-1", "ended 2 tokenRevoked"])
    }

    @Test func aRemoteLogoutEndsOnlyTheSessionsThatUsedTheToken() async throws {
        let h = DomainHarness()
        try await h.makeUsers(2)
        h.connect(1, as: 1)  // token-1
        h.connect(2, as: 1)  // token-2, same user
        h.connect(3, as: 2)
        h.hub.sessions.applyRemoteTokenRevoked(user: 1, fingerprint: TokenFingerprint(token: "token-1"))
        #expect(h.events.ended.map { "\($0.connection) \($0.why)" } == ["1 tokenRevoked"])
        #expect(h.hub.sessions.user(of: 1) == nil && h.hub.sessions.user(of: 2)?.id == 1)
        // A check of that token finishing now (it read the store before the logout committed) cannot bind it.
        h.hub.sessions.open(4, token: nil)
        h.hub.sessions.bind(4, to: h.users[1]!, token: "token-1")
        #expect(h.hub.sessions.user(of: 4) == nil)
        #expect(h.events.ended.last.map { "\($0.connection) \($0.why)" } == "4 tokenRevoked")
    }

    @Test func aRemoteSuspensionEndsEverySessionOfTheUserAndChecksUnderWay() async throws {
        let h = DomainHarness()
        try await h.makeUsers(2)
        h.connect(1, as: 1)
        h.connect(2, as: 1)
        h.connect(3, as: 2)
        h.hub.sessions.applyRemoteSessionsEnded(user: 1, why: .suspended)
        #expect(Set(h.events.ended.map { "\($0.connection) \($0.why)" }) == ["1 suspended", "2 suspended"])
        #expect(h.hub.sessions.isOnline(2) && !h.hub.sessions.isOnline(1))
        // An account check that began before the suspension arrived does not start a session.
        h.hub.sessions.open(5, token: nil)
        h.hub.sessions.bind(5, to: h.users[1]!, token: "token-5", checkedFrom: 0)
        #expect(h.hub.sessions.user(of: 5) == nil)
    }
}

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct SessionRecheckTests {
    /// A real token for `user` in the store (base64url of 32 bytes, stored as its digest), and its text.
    static func token(_ h: DomainHarness, _ user: Int64, _ seed: UInt8) async throws -> String {
        let raw = [UInt8](repeating: seed, count: 32)
        try await h.store.insertToken(hash: Digest.sha256(raw), userID: user, createdAt: h.clock.now())
        return Base64URL.encode(raw)
    }

    @Test func aRecheckEndsTheSessionsWhoseTokenOrAccountTheStoreRefusesNow() async throws {
        let h = DomainHarness()
        try await h.makeUsers(3)
        let kept = try await Self.token(h, 1, 1)
        let revoked = try await Self.token(h, 1, 2)
        let suspended = try await Self.token(h, 2, 3)
        for (connection, user, token) in [(1, 1, kept), (2, 1, revoked), (3, 2, suspended)]
            as [(ConnectionID, Int64, String)]
        {
            h.hub.sessions.open(connection, token: nil)
            h.hub.sessions.bind(connection, to: h.users[user]!, token: token)
        }
        // What another node committed while this one heard nothing of it.
        _ = try await h.store.deleteToken(hash: Digest.sha256([UInt8](repeating: 2, count: 32)))
        h.store.state.withLock { $0.suspensions[2] = Suspension(reason: "spam", since: 0, until: nil) }
        let ended = try await outcome(h) { done in h.hub.sessions.recheckTokens { done($0) } }.get()
        #expect(ended == 2)
        #expect(Set(h.events.ended.map { "\($0.connection) \($0.why)" }) == ["2 tokenRevoked", "3 suspended"])
        #expect(h.hub.sessions.user(of: 1)?.id == 1)
        // The store away: the check says so and nothing is ended for it.
        h.store.state.withLock { $0.failReads = true }
        let away = try await outcome(h) { done in h.hub.sessions.recheckTokens { done($0) } }
        #expect((try? away.get()) == nil)
        #expect(h.hub.sessions.user(of: 1)?.id == 1)
    }
}
