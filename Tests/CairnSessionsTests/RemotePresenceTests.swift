// Presence through the `RemotePresence` seam (several nodes): a friend online on another node appears online; a
// change elsewhere reaches friends here unless the user is also connected here; a user who leaves this node but
// stays online on another is not announced offline; every local change is told to the seam. Hidden still wins.
import CairnCore
import CairnHub
import CairnHubTestSupport
import CairnLoop
import CairnSocial
import Testing

@testable import CairnSessions

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct RemotePresenceTests {
    @Test func aFriendOnAnotherNodeAppearsOnlineAndIsAnnounced() async throws {
        let h = DomainHarness()
        try await h.makeUsers(2)
        try h.restore(friends: [(1, 2)])
        let remote = FakeRemotePresence()
        h.hub.sessions.remotePresence = remote
        _ = h.connect(1, as: 2)  // user 2 here (announced to user 1, who is not connected anywhere)
        let before = h.events.published.count
        let now = h.clock.now()
        #expect(!h.hub.social.appearsOnline(1, to: 2, now: now))
        remote.elsewhere = [1]
        h.hub.social.applyRemotePresence(1, online: true)
        #expect(h.hub.social.appearsOnline(1, to: 2, now: now))
        #expect(h.events.published.dropFirst(before).map(\.name) == ["presence.online"])
        #expect(h.events.published.last?.users == [2])
        remote.elsewhere = []
        h.hub.social.applyRemotePresence(1, online: false)
        #expect(!h.hub.social.appearsOnline(1, to: 2, now: now))
        #expect(h.events.published.dropFirst(before).map(\.name) == ["presence.online", "presence.offline"])
    }

    @Test func localChangesAreToldAndStayingOnlineElsewhereIsNotAnnouncedOffline() async throws {
        let h = DomainHarness()
        try await h.makeUsers(2)
        try h.restore(friends: [(1, 2)])
        let remote = FakeRemotePresence()
        h.hub.sessions.remotePresence = remote
        _ = h.connect(1, as: 1)
        #expect(remote.told == ["+1"])
        #expect(h.events.published.map(\.name) == ["presence.online"])
        remote.elsewhere = [1]  // user 1 also connected on another node
        h.hub.social.applyRemotePresence(1, online: true)
        #expect(h.events.published.count == 1)  // connected here too: nothing new for friends
        h.hub.sessions.close(1)
        #expect(remote.told == ["+1", "-1"])
        #expect(h.events.published.count == 1)  // still online on the other node
        #expect(h.hub.sessions.isOnlineAnywhere(1))
        #expect(!h.hub.sessions.isOnline(1))
    }

    @Test func hiddenFromAViewerStaysHiddenWhenOnlineElsewhere() async throws {
        let h = DomainHarness()
        try await h.makeUsers(2)
        try h.restore(friends: [(1, 2)], rules: [(owner: 1, viewer: 2, level: .hidden)])
        let remote = FakeRemotePresence()
        h.hub.sessions.remotePresence = remote
        remote.elsewhere = [1]
        h.hub.social.applyRemotePresence(1, online: true)
        #expect(!h.hub.social.appearsOnline(1, to: 2, now: h.clock.now()))
        #expect(h.events.published.isEmpty)
    }

    @Test func aSingleNodeHasNoRemotePresence() async throws {
        let h = DomainHarness()
        try await h.makeUsers(1)
        #expect(h.hub.sessions.remotePresence == nil)
        #expect(!h.hub.sessions.isOnlineAnywhere(1))
        _ = h.connect(1, as: 1)
        #expect(h.hub.sessions.isOnlineAnywhere(1))
    }
}
