// Item positions across nodes, through the `RemoteItems` seam: on the node the tracker reported to, a move lists to
// the port the members of the item's audience online elsewhere, once, and nobody else (not a stranger, not a friend
// the bucket is not shared with, not a viewer when the item is hidden); a connection that watches items follows the
// items it may view and lets go when it unwatches or closes; a move heard from another node updates this node's
// memory of the item and reaches only listed viewers watching here who may still see the item; and `items.watch` on
// a node brings what it knows up to date from the shared store; what a watching connection follows is read again
// when its user is told a bucket changed or went, here or on another node.
import CairnHub
import CairnHubTestSupport
import CairnLoop
import CairnSessions
import CairnSocial
import Testing

@testable import CairnBuckets
@testable import CairnCore
@testable import CairnTrackers

/// Records what the trackers handed to other nodes, and counts follows per item.
final class RecordingRemoteItems: RemoteItems {
    var moves: [(position: ItemPosition, tracker: Int64, viewers: [Int64])] = []
    var follows: [Int64: Int] = [:]

    func follow(_ item: Int64) { follows[item, default: 0] += 1 }
    func unfollow(_ item: Int64) {
        follows[item, default: 0] -= 1
        if follows[item] == 0 { follows[item] = nil }
    }
    func itemMoved(_ position: ItemPosition, tracker: Int64, to viewers: [Int64]) {
        moves.append((position, tracker, viewers))
    }
}

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct RemoteItemsTests {
    /// The find-item scene (Alice owns Gear with the Bike, Bob views it, Carol is a stranger, Dan a friend of
    /// Alice's it is not shared with) with a presence mirror and a recording port attached.
    static func scene() async throws -> (FindItemHarness, RecordingRemoteItems, FakeRemotePresence) {
        let f = try await FindItemHarness()
        let presence = FakeRemotePresence()
        let remote = RecordingRemoteItems()
        f.h.hub.sessions.remotePresence = presence
        f.h.hub.trackers.remote = remote
        return (f, remote, presence)
    }

    /// A fix for the Bike `north` degrees north of home at `ts`.
    static func fix(north: Double, ts: Int64) -> Fix {
        Fix(lat: FindItemHarness.home.lat + north, lon: FindItemHarness.home.lon, acc: 5, ts: ts)
    }

    @Test func aMoveListsOnlyAudienceMembersOnlineElsewhere() async throws {
        let (f, remote, presence) = try await Self.scene()
        presence.elsewhere = [2, 3, 4]  // Bob (a viewer), Carol (a stranger), Dan (a friend, not shared with)
        try await f.bikeAt(north: 10)
        #expect(remote.moves.count == 1)
        #expect(remote.moves.first?.viewers == [2])
        #expect(remote.moves.first?.tracker == 1)
        #expect(remote.moves.first?.position.item == f.item)
        #expect(remote.moves.first?.position.fix == f.h.hub.trackers.position(of: f.item))

        // Hidden: only owners may hear it; Bob is no longer listed, and with nobody listed the port hears nothing.
        _ = try await f.update(f.alice, ItemChanges(hidden: true)).get()
        f.h.clock.advance(by: 1000)
        try await f.bikeAt(north: 20)
        #expect(remote.moves.count == 1)
        presence.elsewhere = [1, 2, 3, 4]  // Alice connected on another node too
        f.h.clock.advance(by: 1000)
        try await f.bikeAt(north: 30)
        #expect(remote.moves.count == 2)
        #expect(remote.moves.last?.viewers == [1])
    }

    @Test func nobodyElsewhereNothingListed() async throws {
        let (f, remote, presence) = try await Self.scene()
        presence.elsewhere = [3, 4]
        try await f.bikeAt(north: 10)
        #expect(remote.moves.isEmpty)
    }

    @Test func watchingFollowsTheViewableItemsUntilUnwatchOrClose() async throws {
        let (f, remote, _) = try await Self.scene()
        _ = try await f.call { f.h.hub.trackers.watch(f.bob, $0) }.get()
        #expect(remote.follows == [f.item: 1])
        let bob2 = f.h.connect(5, as: 2)
        _ = try await f.call { f.h.hub.trackers.watch(bob2, $0) }.get()
        _ = try await f.call { f.h.hub.trackers.watch(bob2, $0) }.get()  // again: still one follow for it
        #expect(remote.follows == [f.item: 2])
        _ = try await f.call { f.h.hub.trackers.watch(f.carol, $0) }.get()  // views nothing: follows nothing
        #expect(remote.follows == [f.item: 2])

        f.h.hub.trackers.unwatch(f.bob)
        #expect(remote.follows == [f.item: 1])
        f.h.hub.sessions.close(5)
        #expect(remote.follows.isEmpty)
    }

    @Test func aConnectionClosedBeforeItsWatchIsAnsweredFollowsNothing() async throws {
        let (f, remote, _) = try await Self.scene()
        var answered = false
        f.h.hub.trackers.watch(f.bob) { _ in answered = true }
        f.h.hub.sessions.close(2)
        try await f.settle()
        #expect(answered)
        #expect(remote.follows.isEmpty)
    }

    @Test func aMoveHeardFromElsewhereUpdatesMemoryAndReachesListedWatchersOnly() async throws {
        let (f, _, _) = try await Self.scene()
        for caller in [f.alice, f.bob, f.carol] { _ = try await f.call { f.h.hub.trackers.watch(caller, $0) }.get() }
        let fix = Self.fix(north: 0.01, ts: f.h.clock.now())
        // Carol is listed (as a foreign node might) but is not in the audience; Alice is in it but not listed.
        f.h.hub.trackers.remoteMoved(ItemPosition(item: f.item, fix: fix), tracker: 1, viewers: [2, 3])
        try await f.settle()
        #expect(f.h.hub.trackers.position(of: f.item) == fix)
        #expect(f.h.events.itemsMoved.count == 1)
        #expect(f.h.events.itemsMoved.first?.connections == [2])
        #expect(f.h.events.itemsMoved.first?.position == ItemPosition(item: f.item, fix: fix))

        // An older fix heard later changes nothing and goes nowhere.
        let older = Self.fix(north: 0.02, ts: fix.ts - 1)
        f.h.hub.trackers.remoteMoved(ItemPosition(item: f.item, fix: older), tracker: 1, viewers: [1, 2])
        try await f.settle()
        #expect(f.h.hub.trackers.position(of: f.item) == fix)
        #expect(f.h.events.itemsMoved.count == 1)

        // Without watchers listed, memory still follows the item (what `items.watch` answers here).
        let newer = Self.fix(north: 0.03, ts: fix.ts + 1)
        f.h.hub.trackers.remoteMoved(ItemPosition(item: f.item, fix: newer), tracker: 1, viewers: [4])
        try await f.settle()
        #expect(f.h.hub.trackers.position(of: f.item) == newer)
        #expect(f.h.events.itemsMoved.count == 1)
    }

    @Test func aMoveHeardAfterAccessWasLostHereReachesNobody() async throws {
        let (f, _, _) = try await Self.scene()
        _ = try await f.call { f.h.hub.trackers.watch(f.bob, $0) }.get()
        _ = try await f.call { f.h.hub.buckets.unshare(f.alice, bucket: f.bucket, user: 2, $0) }.get()
        f.h.events.clear()
        let fix = Self.fix(north: 0.01, ts: f.h.clock.now())
        f.h.hub.trackers.remoteMoved(ItemPosition(item: f.item, fix: fix), tracker: 1, viewers: [2])  // read before
        try await f.settle()
        #expect(f.h.events.itemsMoved.isEmpty)
    }

    @Test func aMoveHeardForADeletedItemOrAnUnpairedTrackerIsIgnored() async throws {
        let (f, _, _) = try await Self.scene()
        _ = try await f.call { f.h.hub.trackers.watch(f.bob, $0) }.get()
        let paired = try await f.call { f.h.hub.trackers.pair(f.alice, item: f.item, device: "bike-9", $0) }.get()
        _ = try await f.call { f.h.hub.trackers.unpair(f.alice, tracker: paired.record.id, $0) }.get()
        let fix = Self.fix(north: 0.01, ts: f.h.clock.now())
        f.h.hub.trackers.remoteMoved(ItemPosition(item: f.item, fix: fix), tracker: paired.record.id, viewers: [2])
        try await f.settle()
        #expect(f.h.hub.trackers.position(of: f.item) == nil)
        #expect(f.h.events.itemsMoved.isEmpty)
    }

    @Test func watchBringsPositionsUpToDateFromTheStoreOnSeveralNodes() async throws {
        let (f, _, _) = try await Self.scene()
        let paired = try await f.call { f.h.hub.trackers.pair(f.alice, item: f.item, device: "bike-9", $0) }.get()
        let fix = Self.fix(north: 0.01, ts: f.h.clock.now())
        // Committed by the node the tracker reported to; this node never heard of it.
        _ = try await f.h.trackers.recordTrackerFix(tracker: paired.record.id, fix: fix)
        #expect(f.h.hub.trackers.position(of: f.item) == nil)
        let seen = try await f.call { f.h.hub.trackers.watch(f.bob, $0) }.get()
        #expect(seen == [ItemPosition(item: f.item, fix: fix)])
        #expect(f.h.hub.trackers.position(of: f.item) == fix)
    }

    @Test func aConnectionClosedBeforeItsWatchIsAnsweredIsNotLeftAsAWatcherOnOneNode() async throws {
        let f = try await FindItemHarness()
        var answered = false
        f.h.hub.trackers.watch(f.bob) { _ in answered = true }
        f.h.hub.sessions.close(2)
        try await f.settle()
        #expect(answered)
        #expect(f.h.hub.trackers.watcherOf[2] == nil && f.h.hub.trackers.watchers[2] == nil)
    }

    @Test func aSingleNodeWatchAnswersFromMemoryAndFollowsNothing() async throws {
        let f = try await FindItemHarness()
        let paired = try await f.call { f.h.hub.trackers.pair(f.alice, item: f.item, device: "bike-9", $0) }.get()
        _ = try await f.h.trackers.recordTrackerFix(
            tracker: paired.record.id, fix: Self.fix(north: 0.01, ts: f.h.clock.now()))
        let seen = try await f.call { f.h.hub.trackers.watch(f.bob, $0) }.get()
        #expect(seen.isEmpty)  // one node: memory is the truth, the store is not read
        #expect(f.h.hub.trackers.followed(by: 2).isEmpty)
    }

    @Test func aShareAnItemAddedOrAnUnshareAfterWatchChangesWhatIsFollowed() async throws {
        let (f, remote, _) = try await Self.scene()
        _ = try await f.call { f.h.hub.trackers.watch(f.bob, $0) }.get()
        _ = try await f.call { f.h.hub.trackers.watch(f.dan, $0) }.get()  // a friend, not shared with: nothing
        #expect(remote.follows == [f.item: 1])

        _ = try await f.call { f.h.hub.buckets.share(f.alice, bucket: f.bucket, user: 4, role: "viewer", $0) }.get()
        try await f.settle()
        #expect(remote.follows == [f.item: 2])
        #expect(f.h.hub.trackers.followed(by: 4) == [f.item])

        let helmet = try await f.call {
            f.h.hub.buckets.createItem(f.alice, bucket: f.bucket, name: "Helmet", photo: nil, note: nil, $0)
        }.get().record.id
        try await f.settle()
        #expect(remote.follows == [f.item: 2, helmet: 2])

        _ = try await f.call { f.h.hub.buckets.unshare(f.alice, bucket: f.bucket, user: 4, $0) }.get()
        try await f.settle()
        #expect(remote.follows == [f.item: 1, helmet: 1])
        #expect(f.h.hub.trackers.followed(by: 4).isEmpty)
        #expect(f.h.hub.trackers.followed(by: 2) == [f.item, helmet].sorted())
    }

    @Test func bucketNewsFromAnotherNodeRereadsWhatItsUsersFollow() async throws {
        let (f, remote, _) = try await Self.scene()
        _ = try await f.call { f.h.hub.trackers.watch(f.dan, $0) }.get()
        #expect(remote.follows.isEmpty)
        // Committed through another node: this node's store sees it, its memory heard nothing yet.
        _ = try await f.h.buckets.setMember(bucket: f.bucket, user: 4, role: .viewer)
        #expect(remote.follows.isEmpty)
        f.h.hub.trackers.bucketNewsHeard([4])
        f.h.hub.trackers.bucketNewsHeard([4])  // heard during the read: read once more after it
        try await f.settle()
        #expect(remote.follows == [f.item: 1])
        f.h.hub.trackers.bucketNewsHeard([3])  // Carol does not watch here: nothing is read for her
        try await f.settle()
        #expect(remote.follows == [f.item: 1])
    }

    @Test func aSingleNodeFollowsNothingWhenBucketsChange() async throws {
        let f = try await FindItemHarness()
        _ = try await f.call { f.h.hub.trackers.watch(f.dan, $0) }.get()
        _ = try await f.call { f.h.hub.buckets.share(f.alice, bucket: f.bucket, user: 4, role: "viewer", $0) }.get()
        try await f.settle()
        #expect(f.h.hub.trackers.followed(by: 4).isEmpty)
        #expect(f.h.hub.trackers.refollowing.isEmpty)
    }

    @Test func aFriendshipEndedElsewhereIsNotToldOrWrittenAgainHere() async throws {
        let (f, remote, _) = try await Self.scene()
        _ = try await f.call { f.h.hub.trackers.watch(f.bob, $0) }.get()
        f.h.events.clear()
        // The node that committed Alice's unfriend removed Bob's share and told him; this node only applies it.
        f.h.hub.social.applyRemoteFriendshipEnded(1, 2, versionAB: 10, versionBA: 10)
        try await f.settle()
        #expect(!f.h.events.toUsers.contains { if case .bucketRemoved = $0.event { true } else { false } })
        let gear = try #require(try await f.h.buckets.bucket(id: f.bucket))
        #expect(gear.members[2] == .viewer, "nothing written here")
        #expect(remote.follows == [f.item: 1], "what Bob follows was read again: the store still shares Gear")
    }

    @Test func afterTheInboxWasResubscribedEveryWatcherIsReadAgain() async throws {
        let (f, remote, _) = try await Self.scene()
        _ = try await f.call { f.h.hub.trackers.watch(f.dan, $0) }.get()
        _ = try await f.h.buckets.setMember(bucket: f.bucket, user: 4, role: .viewer)  // its news was lost
        f.h.hub.trackers.refollowWatchers()
        try await f.settle()
        #expect(remote.follows == [f.item: 1])
    }
}
