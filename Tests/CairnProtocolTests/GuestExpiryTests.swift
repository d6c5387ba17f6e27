import CairnHub
import CairnHubTestSupport
import CairnLiveMap
import CairnLoop
import CairnProtocol
import Synchronization
import Testing

// Guest accounts expire after `guestExpiryMs` without a connection (issue 11, item 6): the hub's tick records a
// guest's last activity when a session begins or ends (and hourly while connected), and the hourly purge deletes
// the inactive ones off the loop; their relics leave memory with a vanish to those who saw them, their position
// leaves the live map. A connected guest is never purged, however old their account; a member never is.
@testable import CairnCore
@testable import CairnSessions

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct GuestExpiryTests {
    static let day: Int64 = 24 * 3600 * 1000

    /// A hub whose account store deletes purged guests' relics from the content store, as SQLite's cascade does.
    func harness() -> HubHarness {
        let h = HubHarness()
        let content = h.content
        h.store.purgeRelics.withLock { $0 = { content.deleteRelics(of: $0) } }
        return h
    }

    /// Runs one tick and every store call it started, to the end.
    func tick(_ h: HubHarness) async throws {
        h.hub.tick()
        while h.hub.operationsInFlight > 0 { try await h.scheduler.run() }
    }

    /// A guest on `connection`; returns their id.
    func guest(_ h: HubHarness, _ connection: ConnectionID) async throws -> Int64 {
        h.router.connectionOpened(connection, token: nil)
        let reply = try await h.request(connection, #"{"id":1,"op":"guest"}"#, id: 1, completions: 1)
        return Int64(try #require((reply["user"] as? [String: Any])?["id"] as? Int))
    }

    func exists(_ h: HubHarness, _ user: Int64) -> Bool { h.store.state.withLock { $0.users[user] != nil } }

    @Test func anInactiveGuestIsPurgedOnTickAndTheirRelicLeavesMemory() async throws {
        let h = harness()
        let alice = try await h.user(1, "alice")
        let guest = try await guest(h, 5)
        h.stand(5, lat: 48.85, lon: 2.35)
        let created = try await h.request(
            5, #"{"id":3,"op":"relic.create","text":"hello","radius":50}"#, id: 3,
            completions: 1)
        let relic = try #require((created["relic"] as? [String: Any])?["id"] as? Int)
        h.stand(1, lat: 48.8501, lon: 2.35)
        #expect(h.outbound.take(1).contains { $0["ev"] as? String == "relic.appear" })
        h.router.connectionClosed(5)
        try await tick(h)  // writes the guest's last activity: now
        let leftAt = h.clock.now()
        #expect(h.store.state.withLock { $0.lastSeen[guest] } == leftAt)

        h.clock.advance(by: 30 * Self.day - 1)
        try await tick(h)
        #expect(exists(h, guest) && h.hub.liveRelics == 1, "not inactive for the whole expiry yet")

        h.clock.advance(by: 3600 * 1000)  // the next purge, an hour later
        try await tick(h)
        #expect(!exists(h, guest))
        #expect(exists(h, alice), "members never expire")
        #expect(h.hub.liveRelics == 0)
        #expect(h.content.state.withLock { $0.relics.isEmpty })
        #expect(h.hub.liveMap.fix(of: guest) == nil)
        let vanish = h.outbound.take(1).first { $0["ev"] as? String == "relic.vanish" }
        #expect(vanish?["id"] as? Int == relic)
        let nearby = try await h.request(1, #"{"id":4,"op":"relic.nearby"}"#, id: 4)
        #expect((nearby["relics"] as? [[String: Any]])?.isEmpty == true)
    }

    @Test func aConnectedGuestIsKeptAndCountsFromLeaving() async throws {
        let h = harness()
        let guest = try await guest(h, 5)
        try await tick(h)
        h.clock.advance(by: 45 * Self.day)  // connected all along, with no tick writing in between
        try await tick(h)
        #expect(exists(h, guest))
        #expect(h.store.state.withLock { $0.purgeSpared.last?.contains(guest) } == true)
        #expect(h.store.state.withLock { $0.lastSeen[guest] } == h.clock.now(), "connected guests are marked again")

        h.clock.advance(by: 10 * Self.day)
        h.router.connectionClosed(5)
        try await tick(h)
        h.clock.advance(by: 29 * Self.day)
        try await tick(h)
        #expect(exists(h, guest), "inactive only since leaving, 29 days ago")
        h.clock.advance(by: 2 * Self.day)
        try await tick(h)
        #expect(!exists(h, guest))
    }

    @Test func zeroKeepsGuestsForever() async throws {
        let h = HubHarness { $0.guestExpiryMs = 0 }
        let guest = try await guest(h, 5)
        h.router.connectionClosed(5)
        try await tick(h)
        h.clock.advance(by: 400 * Self.day)
        try await tick(h)
        #expect(exists(h, guest))
        #expect(h.store.state.withLock { $0.purgeSpared.isEmpty })
    }

    @Test func aGuestWhoConnectedWhileThePurgeRanIsClosed() async throws {
        let h = harness()
        let guest = try await guest(h, 5)
        h.router.connectionClosed(5)
        try await tick(h)
        h.clock.advance(by: 31 * Self.day)
        h.hub.tick()  // the purge starts, and reads the guest as offline
        // The guest's account is bound again before the purge's result comes back (a token checked just before).
        h.router.connectionOpened(6, token: nil)
        h.hub.sessions.bind(6, to: User(id: guest, username: "g", name: "Guest", isGuest: true), token: "t")
        while h.hub.operationsInFlight > 0 { try await h.scheduler.run() }
        #expect(!exists(h, guest))
        #expect(h.hub.sessions.user(of: 6) == nil, "the account is gone: the session ends")
        #expect(h.outbound.closes[6] != nil)
    }
}
