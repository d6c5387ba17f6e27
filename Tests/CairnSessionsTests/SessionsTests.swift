import CairnCore
import CairnHub
import CairnHubTestSupport
import CairnLiveMap
import CairnLoop
import Testing

@testable import CairnSessions

// Sessions in domain terms: presence follows the first and last bound connection, an unauthenticated connection
// is ended at its deadline, a token revoked just before a check cannot start a session, and upgrade tokens are
// checked a bounded number at a time, the rest in order, none lost.

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct SessionsTests {
    @Test func presenceIsToldToFriendsOnTheFirstAndLastConnectionOnly() async throws {
        let h = DomainHarness()
        try await h.makeUsers(2)
        try h.restore(friends: [(1, 2)])
        h.connect(1, as: 1)
        h.connect(2, as: 1)
        #expect(h.events.published.map(\.name) == ["presence.online"])
        #expect(h.events.published.first?.users == [2])
        #expect(h.hub.sessions.isOnline(1))
        h.hub.sessions.close(1)
        #expect(h.events.published.count == 1)  // still online on connection 2
        h.hub.sessions.close(2)
        #expect(h.events.published.map(\.name) == ["presence.online", "presence.offline"])
        #expect(!h.hub.sessions.isOnline(1))
    }

    @Test func anUnauthenticatedConnectionIsEndedAtItsDeadline() async throws {
        let h = DomainHarness { $0.authTimeoutMs = 10_000 }
        h.hub.sessions.open(9, token: nil)
        h.clock.advance(by: 9_999)
        h.hub.tick()
        #expect(h.events.ended.isEmpty)
        h.clock.advance(by: 1)
        h.hub.tick()
        #expect(h.events.ended.map(\.connection) == [9])
        #expect(h.events.ended.first?.why == .authenticationTimeout)
    }

    @Test func aRevokedTokenCannotStartASession() async throws {
        let h = DomainHarness()
        try await h.makeUsers(1)
        h.hub.sessions.open(3, token: nil)
        h.hub.sessions.rememberRevoked("stale-token")
        h.hub.sessions.bind(3, to: h.users[1]!, token: "stale-token")
        #expect(h.hub.sessions.user(of: 3) == nil)
        #expect(h.events.ended.map(\.why) == [.tokenRevoked])
    }

    @Test func upgradeTokensAreCheckedABoundedNumberAtOnceAndTheRestInTurn() async throws {
        let h = DomainHarness { $0.authTimeoutMs = 10_000 }
        let maker = Accounts(store: h.store, hasher: fastHasher(h.random), random: h.random, clock: h.clock)
        let count = Sessions.maxUpgradeChecks + 6
        var tokens: [String] = []
        for _ in 0..<count { tokens.append(try await maker.guest().token) }
        let ids = (0..<count).map { ConnectionID(100 + $0) }
        var checked: [ConnectionID] = []
        for (id, token) in zip(ids, tokens) { h.hub.sessions.open(id, token: token, checked: { checked.append(id) }) }
        #expect(h.hub.sessions.upgradeChecksRunning == Sessions.maxUpgradeChecks)
        #expect(h.hub.sessions.upgradeChecksWaiting == 6)
        #expect(h.hub.operationsInFlight == count)  // the waiting ones too: a shutdown waits for them
        // One leaves while it waits; the deadline passes for all, but none is closed while its check is pending.
        h.hub.sessions.close(ids[count - 1])
        h.clock.advance(by: 10_001)
        h.hub.tick()
        #expect(!h.events.ended.contains { $0.why == .authenticationTimeout })
        while h.hub.operationsInFlight > 0 {
            try await h.scheduler.run()
            #expect(h.hub.sessions.upgradeChecksRunning <= Sessions.maxUpgradeChecks)
        }
        #expect(h.hub.sessions.upgradeChecksRunning == 0 && h.hub.sessions.upgradeChecksWaiting == 0)
        #expect(Set(checked) == Set(ids))
        #expect(ids.dropLast().allSatisfy { h.hub.sessions.user(of: $0) != nil })
        #expect(h.hub.sessions.user(of: ids[count - 1]) == nil)
    }
}

/// The counts a health probe reads are kept as sessions change, and always agree with a recount.
@MainActor
@Suite(.timeLimit(.minutes(5)))
struct SessionCountsTests {
    @Test func authenticatedAndWatchingCountsFollowEveryChange() async throws {
        let h = DomainHarness()
        try await h.makeUsers(3)
        try h.restore(friends: [(1, 2)])
        h.hub.sessions.open(10, token: nil)
        #expect(h.hub.sessions.authenticatedCount == 0)
        let a = h.connect(1, as: 1, watching: true)
        h.connect(2, as: 2, watching: true)
        h.connect(3, as: 1)
        #expect(h.hub.sessions.authenticatedCount == 3 && h.hub.sessions.watchingCount == 2)
        h.hub.liveMap.unwatch(a)
        h.hub.liveMap.unwatch(a)  // twice changes nothing more
        #expect(h.hub.sessions.watchingCount == 1)
        h.hub.sessions.bind(2, to: h.users[3]!, token: "other")  // switching accounts: still one connection
        #expect(h.hub.sessions.authenticatedCount == 3 && h.hub.sessions.watchingCount == 0)
        h.hub.sessions.close(1)
        h.hub.sessions.close(10)
        #expect(h.hub.sessions.authenticatedCount == 2 && h.hub.sessions.connectionCount == 2)
        h.hub.sessions.close(2)
        h.hub.sessions.close(3)
        #expect(h.hub.sessions.authenticatedCount == 0 && h.hub.sessions.watchingCount == 0)
    }
}

/// Connections per source address: over the limit a new one is ended at once; closing frees a place; loopback (a
/// local reverse proxy or load tester) is not counted.
@MainActor
@Suite(.timeLimit(.minutes(5)))
struct ConnectionsPerAddressTests {
    @Test func anAddressOverItsLimitIsTurnedAwayAndLoopbackIsExempt() {
        let h = DomainHarness { $0.connectionsPerAddress = 2 }
        h.hub.sessions.open(1, token: nil, peer: "203.0.113.7")
        h.hub.sessions.open(2, token: nil, peer: "203.0.113.7")
        h.hub.sessions.open(3, token: nil, peer: "203.0.113.8")
        #expect(h.events.ended.isEmpty)
        h.hub.sessions.open(4, token: nil, peer: "203.0.113.7")
        #expect(h.events.ended.map(\.connection) == [4] && h.events.ended.first?.why == .tooManyConnections)
        h.hub.sessions.close(4)
        h.hub.sessions.close(1)
        h.hub.sessions.open(5, token: nil, peer: "203.0.113.7")
        #expect(h.events.ended.count == 1)
        for n in 10..<20 as Range<ConnectionID> { h.hub.sessions.open(n, token: nil, peer: "127.0.0.1") }
        #expect(h.events.ended.count == 1)
    }
}
