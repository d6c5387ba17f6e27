// Positions for viewers on other nodes, through the `RemoteFanOut` seam: on the owner's node the live map lists
// each friend online elsewhere at the level it may see (precise, or the snapped approximate fix), never a hidden
// one, in one call per move and only when someone is listed; hides, new views and ended friendships reach viewers
// elsewhere; a viewer arriving on another node gets the current positions of the owners connected here. On the
// viewers' node it follows the friends of every user connected here, and stops when they leave or unfriend.
import CairnHub
import CairnHubTestSupport
import CairnLoop
import CairnSessions
import Testing

@testable import CairnCore
@testable import CairnLiveMap
@testable import CairnSocial

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct RemoteFanOutTests {
    /// User 1 with friends 2 (precise), 3 (approximate), 4 (hidden) on another node and 5 watching here.
    static func harness() async throws -> (DomainHarness, RecordingRemote, FakeRemotePresence, Caller) {
        let h = DomainHarness()
        try await h.makeUsers(5)
        try h.restore(
            friends: [(1, 2), (1, 3), (1, 4), (1, 5)], rules: [(1, 3, .approximate), (1, 4, .hidden)])
        let presence = FakeRemotePresence()
        let remote = RecordingRemote()
        h.hub.sessions.remotePresence = presence
        h.hub.liveMap.remote = remote
        presence.elsewhere = [2, 3, 4]
        let owner = h.connect(1, as: 1)
        h.connect(5, as: 5, watching: true)
        h.events.clear()
        return (h, remote, presence, owner)
    }

    @Test func aNodeAskingForAnOwnerGetsItAtTheViewersLevelAndOnlyForAFriend() async throws {
        let (h, remote, _, owner) = try await Self.harness()
        _ = try h.hub.liveMap.report(owner, PositionReport(lat: 48.85661, lon: 2.35222, acc: 7))
        h.hub.liveMap.remoteViewerAsked(owner: 1, viewer: 2)
        h.hub.liveMap.remoteViewerAsked(owner: 1, viewer: 3)
        h.hub.liveMap.remoteViewerAsked(owner: 1, viewer: 4)  // hidden: what that node holds goes
        #expect(remote.shown.map(\.viewer) == [2, 3])
        #expect(remote.shown[0].position.fix.lat == 48.85661 && !remote.shown[0].position.approximate)
        #expect(remote.shown[1].position.approximate)
        #expect(remote.withdrawn == ["1>4"])
        // Not a friend, or the owner not connected here: nothing at all.
        h.hub.liveMap.remoteViewerAsked(owner: 1, viewer: 99)
        h.hub.liveMap.remoteViewerAsked(owner: 2, viewer: 1)
        #expect(remote.shown.count == 2 && remote.withdrawn.count == 1)
    }

    @Test func aFencedNodeDeliversAndShowsNoPositionUntilTheFenceLifts() async throws {
        let (h, remote, _, owner) = try await Self.harness()
        _ = try h.hub.liveMap.report(owner, PositionReport(lat: 10, lon: 10))
        #expect(h.events.moved.map(\.viewer) == [5])
        // Fenced (cut off, the store unread for too long): a move reaches nobody, here or elsewhere, and nothing
        // is shown, asked for or replayed.
        h.hub.liveMap.fencedAfter = h.clock.now() - 1
        h.events.clear()
        let moves = remote.moves.count
        let accepted = try h.hub.liveMap.report(owner, PositionReport(lat: 10.1, lon: 10))
        #expect(accepted == .accepted, "the owner's own report is still taken")
        #expect(h.events.moved.isEmpty && remote.moves.count == moves)
        let five = Caller(connection: 5, user: h.users[5]!)
        #expect(h.hub.liveMap.watch(five).isEmpty)
        h.hub.liveMap.remoteViewerAsked(owner: 1, viewer: 2)
        #expect(remote.shown.isEmpty)
        // Lifted (a read succeeded): moves flow again.
        h.hub.liveMap.fencedAfter = .max
        _ = try h.hub.liveMap.report(owner, PositionReport(lat: 10.2, lon: 10))
        #expect(h.events.moved.map(\.viewer) == [5] && remote.moves.count == moves + 1)
    }

    @Test func aMoveListsViewersElsewhereByLevelAndNeverTheHidden() async throws {
        let (h, remote, _, owner) = try await Self.harness()
        _ = try h.hub.liveMap.report(owner, PositionReport(lat: 48.85661, lon: 2.35222, acc: 7))
        #expect(remote.moves.count == 1)
        let move = try #require(remote.moves.first)
        #expect(move.owner == 1 && move.precise == [2] && move.approximate == [3])
        #expect(move.preciseFix.lat == 48.85661 && move.preciseFix.acc == 7)
        // The approximate viewer elsewhere is handed the same snapped fix a local approximate viewer would get.
        let snapped = try #require(move.approximateFix)
        let local = try #require(h.hub.liveMap.visiblePosition(of: 1, to: 3, now: h.clock.now()))
        #expect(snapped == local.fix && snapped.acc == nil)
        #expect(snapped.lat != 48.85661 || snapped.lon != 2.35222)
        // The local watcher is served as before; nobody hidden appears anywhere.
        #expect(h.events.moved.map(\.viewer) == [5])
        #expect(!remote.moves.contains { $0.precise.contains(4) || $0.approximate.contains(4) })
        // Inside the same cell the approximate viewer has nothing new: only the precise one is listed.
        _ = try h.hub.liveMap.report(owner, PositionReport(lat: 48.85662, lon: 2.35223))
        #expect(remote.moves.count == 2 && remote.moves[1].precise == [2] && remote.moves[1].approximate.isEmpty)
    }

    @Test func nothingIsHandedOnWhenNoViewerIsElsewhere() async throws {
        let (h, remote, presence, owner) = try await Self.harness()
        presence.elsewhere = [4]  // only the hidden one
        _ = try h.hub.liveMap.report(owner, PositionReport(lat: 10, lon: 10))
        presence.elsewhere = []
        _ = try h.hub.liveMap.report(owner, PositionReport(lat: 10.1, lon: 10))
        #expect(remote.moves.isEmpty)
        #expect(h.events.moved.count == 2)
    }

    @Test func aHideAndANewLevelReachTheViewerElsewhere() async throws {
        let (h, remote, _, owner) = try await Self.harness()
        _ = try h.hub.liveMap.report(owner, PositionReport(lat: 10, lon: 10))
        _ = try await outcome(h) { h.hub.social.setLevel(owner, viewer: 2, level: .hidden, forSeconds: nil, $0) }
        #expect(remote.hidden == ["1>2"])
        _ = try h.hub.liveMap.report(owner, PositionReport(lat: 10.5, lon: 10))
        #expect(remote.moves.last.map { !$0.precise.contains(2) } == true)
        _ = try await outcome(h) {
            h.hub.social.setLevel(owner, viewer: 2, level: .approximate, forSeconds: nil, $0)
        }
        let shown = try #require(remote.shown.last)
        #expect(shown.viewer == 2 && shown.position.owner == 1 && shown.position.approximate)
        #expect(shown.position.fix.lat != 10.5)
    }

    @Test func aViewerArrivingElsewhereGetsTheOwnersConnectedHereAndLosesThoseHiddenFromIt() async throws {
        let (h, remote, _, owner) = try await Self.harness()
        _ = try h.hub.liveMap.report(owner, PositionReport(lat: 20, lon: 20))
        h.hub.liveMap.remoteViewerArrived(2)
        h.hub.liveMap.remoteViewerArrived(3)
        h.hub.liveMap.remoteViewerArrived(4)  // hidden: no position, and whatever that node holds for it goes
        #expect(remote.shown.map(\.viewer) == [2, 3])
        #expect(remote.withdrawn == ["1>4"])
        #expect(remote.shown[0].position.fix.lat == 20 && !remote.shown[0].position.approximate)
        #expect(remote.shown[1].position.approximate)
        h.hub.sessions.close(1)  // the owner is no longer connected here: nothing to send
        h.hub.liveMap.remoteViewerArrived(2)
        #expect(remote.shown.count == 2)
    }

    @Test func viewersHereFollowTheirFriendsWhileConnected() async throws {
        let (h, remote, _, _) = try await Self.harness()
        // 1 and 5 are connected here: each follows the other (their only common friendship).
        #expect(remote.following == ["2>1", "3>1", "4>1", "5>1", "1>5"])
        h.hub.sessions.close(5)
        #expect(remote.following == ["2>1", "3>1", "4>1", "5>1"])
        let five = h.connect(6, as: 5, watching: true)
        #expect(remote.following.contains("1>5"))
        _ = five
    }

    @Test func anEndedFriendshipUnfollowsAndWithdrawsElsewhere() async throws {
        let (h, remote, _, owner) = try await Self.harness()
        _ = try await outcome(h) { h.hub.social.remove(owner, target: 2, $0) }
        #expect(!remote.following.contains("2>1"))
        #expect(remote.withdrawn == ["1>2"])  // 2 is elsewhere; 1 is here, so nothing goes out for 2's moves
        _ = try await outcome(h) { h.hub.social.remove(owner, target: 5, $0) }
        #expect(!remote.following.contains("1>5") && !remote.following.contains("5>1"))
        #expect(remote.withdrawn == ["1>2"])
    }
}
