import CairnErrorCodes
import CairnHub
import CairnHubTestSupport
import CairnLoop
import Synchronization
import Testing

// Store reads about items come back to the loop in any order, and access changes while they are in flight. Each test
// holds one read (the scheduler keeps its loop job), lets an access change commit and be announced, then lets the
// read land: a read that the change overtook must never be used (`AccessEpochs`). Also: pending `item.pos` withdrawn
// when access is lost, a fix arriving after its tracker was unpaired or its item deleted, an item change not undoing
// an owner's removal, and an unpair leaving no left-behind state.
@testable import CairnBuckets
@testable import CairnCore
@testable import CairnSocial
@testable import CairnTrackers

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct ItemAccessRacesTests {
    /// The Bike's tracker, paired and reporting through `Trackers.moved`.
    func bikeTracker(_ f: FindItemHarness) -> TrackerRecord {
        TrackerRecord(id: 1, device: "bike-1", item: f.item, active: true, created: 0)
    }

    func fix(_ f: FindItemHarness, north: Double = 0) -> Fix {
        f.h.clock.advance(by: 1_000)
        return Fix(
            lat: FindItemHarness.home.lat + north / FindItemHarness.metresPerDegree, lon: FindItemHarness.home.lon,
            ts: f.h.clock.now())
    }

    /// Bob watches items; the Bike moves and the lookup of who hears it is held.
    func heldMove(_ f: FindItemHarness) async throws -> () -> Void {
        _ = try await f.call { f.h.hub.trackers.watch(f.bob, $0) }.get()
        _ = try await f.call { f.h.hub.trackers.watch(f.alice, $0) }.get()
        f.h.events.clear()
        return try await f.hold { f.h.hub.trackers.moved(bikeTracker(f), fix(f)) }
    }

    // MARK: P1: a read overtaken by an access change is not used

    @Test func aMoveReadBeforeAnUnshareNeverReachesTheExViewer() async throws {
        let f = try await FindItemHarness()
        let land = try await heldMove(f)
        _ = try await f.call(leaving: 1) { f.h.hub.buckets.unshare(f.alice, bucket: f.bucket, user: 2, $0) }.get()
        land()
        try await f.settle()
        #expect(f.pushes(to: f.bob.connection) == 0)
        #expect(f.pushes(to: f.alice.connection) == 1)  // read again: the owner still hears it
    }

    @Test func aMoveReadBeforeHidingReachesTheOwnersOnly() async throws {
        let f = try await FindItemHarness()
        let land = try await heldMove(f)
        _ = try await f.call(leaving: 1) {
            f.h.hub.buckets.updateItem(f.alice, item: f.item, changes: ItemChanges(hidden: true), $0)
        }.get()
        land()
        try await f.settle()
        #expect(f.pushes(to: f.bob.connection) == 0)
        #expect(f.pushes(to: f.alice.connection) == 1)
    }

    @Test func aMoveReadBeforeADemotionOfAHiddenItemReachesTheOwnersOnly() async throws {
        let f = try await FindItemHarness()
        _ = try await f.call { f.h.hub.buckets.share(f.alice, bucket: f.bucket, user: 2, role: "owner", $0) }.get()
        _ = try await f.update(f.alice, ItemChanges(hidden: true)).get()
        let land = try await heldMove(f)
        _ = try await f.call(leaving: 1) {
            f.h.hub.buckets.share(f.alice, bucket: f.bucket, user: 2, role: "viewer", $0)
        }.get()
        land()
        try await f.settle()
        #expect(f.pushes(to: f.bob.connection) == 0)
        #expect(f.pushes(to: f.alice.connection) == 1)
    }

    @Test func aMoveReadBeforeAFriendshipEndsNeverReachesTheExFriend() async throws {
        let f = try await FindItemHarness()
        let land = try await heldMove(f)
        _ = try await f.call(leaving: 1) { f.h.hub.social.remove(f.alice, target: 2, $0) }.get()
        land()
        try await f.settle()
        #expect(f.pushes(to: f.bob.connection) == 0)
        #expect(f.pushes(to: f.alice.connection) == 1)
    }

    @Test func aMoveWhileAnEndedFriendshipsSharesAreBeingRemovedLeavesTheExFriendOut() async throws {
        let f = try await FindItemHarness()
        _ = try await f.call { f.h.hub.trackers.watch(f.bob, $0) }.get()
        let gate = Gate()
        f.h.buckets.removeViewerGate.withLock { $0 = gate }
        var ended: Result<FriendReply, DomainError>?
        f.h.hub.social.remove(f.alice, target: 2) { ended = $0 }
        try await f.h.scheduler.run()  // the friendship's deletion committed: the shares' removal starts ...
        #expect(try #require(ended).failure == nil)
        f.h.events.clear()
        f.h.hub.trackers.moved(bikeTracker(f), fix(f))  // ... and is held before it writes
        try await f.settle(leaving: 1)
        #expect(f.pushes(to: f.bob.connection) == 0)
        gate.open()
        try await f.settle()
        #expect(f.pushes(to: f.bob.connection) == 0)
    }

    @Test func aWatchAnswerReadBeforeAnUnshareHasNoPosition() async throws {
        let f = try await FindItemHarness()
        try await f.bikeAt(north: 0)
        var answer: Result<[ItemPosition], DomainError>?
        let land = try await f.hold { f.h.hub.trackers.watch(f.bob) { answer = $0 } }
        _ = try await f.call(leaving: 1) { f.h.hub.buckets.unshare(f.alice, bucket: f.bucket, user: 2, $0) }.get()
        land()
        try await f.settle()
        #expect(try #require(answer).get().isEmpty)
    }

    @Test func aWatchAnswerReadBeforeHidingHasNoPositionForAViewer() async throws {
        let f = try await FindItemHarness()
        try await f.bikeAt(north: 0)
        var answer: Result<[ItemPosition], DomainError>?
        let land = try await f.hold { f.h.hub.trackers.watch(f.bob) { answer = $0 } }
        _ = try await f.call(leaving: 1) {
            f.h.hub.buckets.updateItem(f.alice, item: f.item, changes: ItemChanges(hidden: true), $0)
        }.get()
        land()
        try await f.settle()
        #expect(try #require(answer).get().isEmpty)
    }

    @Test func aLocateReadBeforeAnUnshareIsNotFound() async throws {
        let f = try await FindItemHarness()
        try await f.bikeAt(north: 0)
        var answer: Result<ItemLocation, DomainError>?
        let land = try await f.hold { f.h.hub.trackers.locate(f.bob, item: f.item) { answer = $0 } }
        _ = try await f.call(leaving: 1) { f.h.hub.buckets.unshare(f.alice, bucket: f.bucket, user: 2, $0) }.get()
        land()
        try await f.settle()
        #expect(try #require(answer).failure?.code == .notFound)
    }

    @Test func aLocateReadBeforeAFriendshipEndsIsNotFound() async throws {
        let f = try await FindItemHarness()
        try await f.bikeAt(north: 0)
        var answer: Result<ItemLocation, DomainError>?
        let land = try await f.hold { f.h.hub.trackers.locate(f.bob, item: f.item) { answer = $0 } }
        _ = try await f.call(leaving: 1) { f.h.hub.social.remove(f.alice, target: 2, $0) }.get()
        land()
        try await f.settle()
        #expect(try #require(answer).failure?.code == .notFound)
    }

    // MARK: P2: an item's change does not undo an owner's removal

    /// Dan co-owns Gear; the Bike is at home with Alice and Dan by it.
    func coOwned() async throws -> FindItemHarness {
        let f = try await FindItemHarness()
        _ = try await f.call { f.h.hub.buckets.share(f.alice, bucket: f.bucket, user: 4, role: "owner", $0) }.get()
        try await f.bikeAt(north: 0)
        f.arrive(1)
        f.arrive(4)
        return f
    }

    /// Dan walks away and stays away past the grace time: what he hears.
    func danLeaves(_ f: FindItemHarness) -> [String] {
        f.h.events.clear()
        f.walk(4, north: 300)
        f.wait(61_000)
        return f.alerts.filter { $0.users == [4] }.map(\.name)
    }

    @Test func anItemChangeReadBeforeAnOwnerLeftDoesNotPutThemBackOnTheAlertList() async throws {
        let f = try await coOwned()
        _ = try await f.update(f.alice, ItemChanges(alert: true)).get()
        var renamed: Result<ItemView, DomainError>?
        let land = try await f.hold {
            f.h.hub.buckets.updateItem(f.alice, item: f.item, changes: ItemChanges(name: "Red bike")) { renamed = $0 }
        }
        _ = try await f.call(leaving: 1) { f.h.hub.buckets.unshare(f.alice, bucket: f.bucket, user: 4, $0) }.get()
        land()
        try await f.settle()
        #expect(try #require(renamed).failure == nil)
        #expect(f.h.hub.trackers.alerting[f.item]?.owners == [1])
        #expect(danLeaves(f).isEmpty)
    }

    @Test func anAlertTurnedOnWithOwnersReadBeforeOneLeftAlertsTheOthersOnly() async throws {
        let f = try await coOwned()
        var turnedOn: Result<ItemView, DomainError>?
        let land = try await f.hold {
            f.h.hub.buckets.updateItem(f.alice, item: f.item, changes: ItemChanges(alert: true)) { turnedOn = $0 }
        }
        _ = try await f.call(leaving: 1) { f.h.hub.buckets.unshare(f.alice, bucket: f.bucket, user: 4, $0) }.get()
        land()
        try await f.settle()
        #expect(try #require(turnedOn).failure == nil)
        #expect(f.h.hub.trackers.alerting[f.item]?.owners == [1])  // read again: Alice alone
        #expect(danLeaves(f).isEmpty)
        f.walk(1, north: 300)
        f.wait(61_000)
        #expect(f.alerts.map(\.users) == [[1]])  // Alice is still alerted
    }

    // MARK: P3: pending item.pos withdrawn when access is lost

    /// Bob and Alice watch; the Bike moved and its position went to both.
    func pushed() async throws -> FindItemHarness {
        let f = try await FindItemHarness()
        _ = try await f.call { f.h.hub.trackers.watch(f.bob, $0) }.get()
        _ = try await f.call { f.h.hub.trackers.watch(f.alice, $0) }.get()
        try await f.bikeAt(north: 0)
        #expect(f.pushes(to: f.bob.connection) == 1)
        f.h.events.clear()
        return f
    }

    func withdrawn(_ f: FindItemHarness) -> [[ConnectionID]] {
        f.h.events.itemsWithdrawn.filter { $0.items == [f.item] }.map(\.connections)
    }

    @Test func anUnshareWithdrawsThePendingPosition() async throws {
        let f = try await pushed()
        _ = try await f.call { f.h.hub.buckets.unshare(f.alice, bucket: f.bucket, user: 2, $0) }.get()
        #expect(withdrawn(f) == [[f.bob.connection]])
    }

    @Test func hidingWithdrawsThePendingPositionFromViewersOnly() async throws {
        let f = try await pushed()
        _ = try await f.update(f.alice, ItemChanges(hidden: true)).get()
        #expect(withdrawn(f) == [[f.bob.connection]])
    }

    @Test func aDemotionWithdrawsThePendingPosition() async throws {
        let f = try await pushed()
        _ = try await f.call { f.h.hub.buckets.share(f.alice, bucket: f.bucket, user: 4, role: "owner", $0) }.get()
        _ = try await f.call { f.h.hub.trackers.watch(f.dan, $0) }.get()
        try await f.bikeAt(north: 10)
        f.h.events.clear()
        _ = try await f.call { f.h.hub.buckets.share(f.alice, bucket: f.bucket, user: 4, role: "viewer", $0) }.get()
        #expect(withdrawn(f) == [[f.dan.connection]])  // a hidden item's position would be for owners only
    }

    @Test func aFriendshipsEndWithdrawsThePendingPosition() async throws {
        let f = try await pushed()
        _ = try await f.call { f.h.hub.social.remove(f.alice, target: 2, $0) }.get()
        #expect(withdrawn(f) == [[f.bob.connection]])
    }

    @Test func aDeletedBucketsPendingPositionsAreWithdrawn() async throws {
        let f = try await pushed()
        _ = try await f.call { f.h.hub.buckets.delete(f.alice, bucket: f.bucket, $0) }.get()
        #expect(withdrawn(f) == [[f.alice.connection, f.bob.connection]])
    }

    @Test func unwatchingWithdrawsThePendingPositions() async throws {
        let f = try await pushed()
        f.h.hub.trackers.unwatch(f.bob)
        #expect(withdrawn(f) == [[f.bob.connection]])
        try await f.bikeAt(north: 10)
        #expect(f.pushes(to: f.bob.connection) == 0)
    }

    // MARK: C1: a fix on its way when its tracker was unpaired or its item deleted

    @Test func aFixCommittedBeforeAnUnpairDoesNotComeBack() async throws {
        let f = try await FindItemHarness()
        let paired = try await f.call { f.h.hub.trackers.pair(f.alice, item: f.item, device: "bike-1", $0) }.get()
        f.h.hub.trackers.moved(paired.record, fix(f))
        #expect(f.h.hub.trackers.position(of: f.item) != nil)
        let late = fix(f, north: 5)  // committed by the ingest, not yet on the loop
        _ = try await f.call { f.h.hub.trackers.unpair(f.alice, tracker: paired.record.id, $0) }.get()
        f.h.hub.trackers.moved(paired.record, late)
        try await f.settle()
        #expect(f.h.hub.trackers.position(of: f.item) == nil)
        #expect(f.h.hub.trackers.items(within: 1_000, of: GeoPointFactory.point(48, 2)!).isEmpty)
        // A tracker paired again (a new id) reports as usual.
        let again = try await f.call { f.h.hub.trackers.pair(f.alice, item: f.item, device: "bike-1", $0) }.get()
        f.h.hub.trackers.moved(again.record, fix(f))
        #expect(f.h.hub.trackers.position(of: f.item) != nil)
    }

    @Test func aFixCommittedBeforeTheItemWasDeletedDoesNotComeBack() async throws {
        let f = try await FindItemHarness()
        try await f.bikeAt(north: 0)
        let late = fix(f, north: 5)
        _ = try await f.call { f.h.hub.buckets.deleteItem(f.alice, item: f.item, $0) }.get()
        f.h.hub.trackers.moved(bikeTracker(f), late)
        try await f.settle()
        #expect(f.h.hub.trackers.position(of: f.item) == nil)
        #expect(f.h.hub.trackers.items(within: 1_000, of: GeoPointFactory.point(48, 2)!).isEmpty)
    }

    // MARK: C4: an unpair leaves no left-behind state

    /// Alice by the Bike (with a paired tracker at home), `alert` on.
    func alerted() async throws -> (FindItemHarness, TrackerRecord) {
        let f = try await FindItemHarness()
        let paired = try await f.call { f.h.hub.trackers.pair(f.alice, item: f.item, device: "bike-1", $0) }.get()
        f.h.hub.trackers.moved(paired.record, fix(f))
        f.arrive(1)
        _ = try await f.update(f.alice, ItemChanges(alert: true)).get()
        f.h.events.clear()
        return (f, paired.record)
    }

    @Test func anUnpairDropsAPendingAlertQuietly() async throws {
        let (f, tracker) = try await alerted()
        f.walk(1, north: 300)
        #expect(f.h.hub.trackers.leftBehindPairs == 1)  // waiting out the grace time
        _ = try await f.call { f.h.hub.trackers.unpair(f.alice, tracker: tracker.id, $0) }.get()
        #expect(f.h.hub.trackers.leftBehindPairs == 0)
        f.wait(120_000)
        #expect(f.alerts.isEmpty)
    }

    @Test func anUnpairDropsAnAlertedPairWithoutReunited() async throws {
        let (f, tracker) = try await alerted()
        f.walk(1, north: 300)
        f.wait(61_000)
        #expect(f.alerts.map(\.name) == ["item.left_behind"])
        _ = try await f.call { f.h.hub.trackers.unpair(f.alice, tracker: tracker.id, $0) }.get()
        #expect(f.h.hub.trackers.leftBehindPairs == 0)
        // Paired again at home, Alice far: a fresh stretch, not a reunion, and a new alert after the grace time.
        let again = try await f.call { f.h.hub.trackers.pair(f.alice, item: f.item, device: "bike-2", $0) }.get()
        f.h.hub.trackers.moved(again.record, fix(f))
        f.wait(61_000)
        #expect(f.alerts.map(\.name) == ["item.left_behind", "item.left_behind"])
    }
}
