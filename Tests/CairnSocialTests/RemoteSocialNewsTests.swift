// Friend events for changes applied from other nodes (`Social+RemoteNews`): a request, an accept (or crossed
// requests) and a removal committed elsewhere reach the users they concern who are connected here, carrying the
// user who acted as read from the store; only when the change was applied here (newer, not already so), only for
// users connected here, never when the news went stale while the store was read, and never from a resync.
import CairnHub
import CairnHubTestSupport
import CairnLoop
import Synchronization
import Testing

@testable import CairnCore
@testable import CairnSocial

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct RemoteSocialNewsTests {
    /// Users 1 to 4; 1 and 2 friends; 1, 2 and 3 connected here, 4 not.
    static func harness() async throws -> DomainHarness {
        let h = DomainHarness()
        try await h.makeUsers(4)
        try h.restore(friends: [(1, 2)])
        h.hub.social.remote = RecordingSocial()
        h.connect(1, as: 1)
        h.connect(2, as: 2)
        h.connect(3, as: 3)
        h.events.clear()
        return h
    }

    /// A version newer than anything held.
    static func version(_ h: DomainHarness, _ step: Int64) -> Int64 { h.clock.now() * 1000 + 100 + step }

    /// Runs the loop until no store work is in flight.
    static func settle(_ h: DomainHarness) async throws {
        while h.hub.operationsInFlight > 0 { try await h.scheduler.run() }
    }

    /// The friend events published so far, as "name actor>addressee(s) actor's username".
    static func news(_ h: DomainHarness) -> [String] {
        h.events.toUsers.compactMap { event, users in
            let (name, actor): (String, User)
            switch event {
            case .friendRequest(let from): (name, actor) = ("friend.request", from)
            case .friendAccepted(let by): (name, actor) = ("friend.accepted", by)
            case .friendRemoved(let by): (name, actor) = ("friend.removed", by)
            default: return nil
            }
            return "\(name) \(actor.id)>\(users.map(String.init).joined(separator: ",")) \(actor.username)"
        }
    }

    @Test func aRequestFromAnotherNodeReachesItsTargetHereOnce() async throws {
        let h = try await Self.harness()
        h.hub.social.applyRemoteRequest(from: 4, to: 3, pending: true, version: Self.version(h, 1))
        try await Self.settle(h)
        #expect(Self.news(h) == ["friend.request 4>3 user4"])
        // The same message again, or an older one: applied already, no news.
        h.hub.social.applyRemoteRequest(from: 4, to: 3, pending: true, version: Self.version(h, 1))
        h.hub.social.applyRemoteRequest(from: 4, to: 3, pending: true, version: Self.version(h, 0))
        #expect(h.hub.operationsInFlight == 0)
        try await Self.settle(h)
        #expect(Self.news(h) == ["friend.request 4>3 user4"])
    }

    @Test func aRequestToSomeoneNotConnectedHereReadsNothingAndTellsNobody() async throws {
        let h = try await Self.harness()
        h.hub.social.applyRemoteRequest(from: 3, to: 4, pending: true, version: Self.version(h, 1))
        #expect(h.hub.social.graph.hasRequest(from: 3, to: 4))
        #expect(h.hub.operationsInFlight == 0)
        #expect(Self.news(h).isEmpty)
    }

    @Test func aRequestWithdrawnWhileTheStoreWasReadIsNotTold() async throws {
        let h = try await Self.harness()
        h.hub.social.applyRemoteRequest(from: 4, to: 3, pending: true, version: Self.version(h, 1))
        let held = try await h.scheduler.hold()
        h.hub.social.applyRemoteRequest(from: 4, to: 3, pending: false, version: Self.version(h, 2))
        for job in held { job() }
        try await Self.settle(h)
        #expect(Self.news(h).isEmpty)
    }

    @Test func anAcceptFromAnotherNodeTellsTheRequesterOnly() async throws {
        let h = try await Self.harness()
        // 3 accepted 1's request on another node: 1 hears it by 3; 3, who accepted, hears nothing.
        h.hub.social.applyRemoteFriendshipBegan(3, 1, version: Self.version(h, 1))
        try await Self.settle(h)
        #expect(h.hub.social.areFriends(1, 3))
        #expect(Self.news(h) == ["friend.accepted 3>1 user3"])
        // Already friends here (a newer message for the same friendship): not news.
        h.hub.social.applyRemoteFriendshipBegan(3, 1, version: Self.version(h, 2))
        try await Self.settle(h)
        #expect(Self.news(h).count == 1)
    }

    @Test func crossedRequestsFromAnotherNodeTellBothSides() async throws {
        let h = try await Self.harness()
        h.hub.social.applyRemoteFriendshipBegan(2, 3, version: Self.version(h, 1), crossed: true)
        try await Self.settle(h)
        #expect(Set(Self.news(h)) == ["friend.accepted 2>3 user2", "friend.accepted 3>2 user3"])
    }

    @Test func aRemovalFromAnotherNodeTellsTheOtherOnce() async throws {
        let h = try await Self.harness()
        let version = Self.version(h, 1)
        h.hub.social.applyRemoteFriendshipEnded(2, 1, versionAB: version, versionBA: version + 1)
        try await Self.settle(h)
        #expect(!h.hub.social.areFriends(1, 2))
        #expect(Self.news(h) == ["friend.removed 2>1 user2"])
        h.hub.social.applyRemoteFriendshipEnded(2, 1, versionAB: version + 2, versionBA: version + 3)
        try await Self.settle(h)
        #expect(Self.news(h).count == 1)
    }

    @Test func aFriendshipBrokenAgainWhileTheStoreWasReadIsNotToldAsAccepted() async throws {
        let h = try await Self.harness()
        h.hub.social.applyRemoteFriendshipBegan(3, 1, version: Self.version(h, 1))
        let held = try await h.scheduler.hold()
        h.hub.social.applyRemoteFriendshipEnded(3, 1, versionAB: Self.version(h, 2), versionBA: Self.version(h, 3))
        for job in held { job() }
        try await Self.settle(h)
        #expect(Self.news(h) == ["friend.removed 3>1 user3"])
    }

    @Test func aResyncMakesUpStateButTellsNobody() async throws {
        let h = try await Self.harness()
        // The shared store holds what this node missed: 1 and 2 no longer friends, 1 and 3 friends, 4 asked 3.
        h.store.state.withLock { s in
            s.friendships.remove([1, 2])
            s.friendships.insert([1, 3])
        }
        try await h.store.addFriendRequest(from: 4, to: 3, at: h.clock.now())
        let counts = try await outcome(h) { h.hub.social.resync($0) }.get()
        try await Self.settle(h)
        #expect(counts.friendshipsBegun == 1 && counts.friendshipsEnded == 1 && counts.requests == 1)
        #expect(h.hub.social.areFriends(1, 3) && !h.hub.social.areFriends(1, 2))
        #expect(Self.news(h).isEmpty)
    }
}
