// Left-behind alerts with several nodes, through the `RemoteItems` and `RemoteBuckets` seams: an alerted item is
// followed while its owner is connected here (and let go when they leave or the alert goes off); a move of it heard
// from another node is judged for left-behind as a local one; its position here is not judged until the tracker's
// latest fix was read from the store (no false alarm on a position heard long ago); a change of the bucket committed
// through another node (alert on or off, the item deleted, the bucket deleted) is read again and applied, and a read
// that a change made here overtook is read again rather than applied; every committed change here is told once.
import CairnHub
import CairnHubTestSupport
import CairnLoop
import CairnSessions
import Testing

@testable import CairnBuckets
@testable import CairnCore
@testable import CairnTrackers

/// Records the buckets told to other nodes.
final class RecordingRemoteBuckets: RemoteBuckets {
    var touched: [Int64] = []
    var gone: [Int64] = []
    func bucketTouched(_ bucket: Int64) { touched.append(bucket) }
    func itemsGone(_ items: [Int64]) { gone += items }
}

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct RemoteAlertsTests {
    /// The find-item scene on a node of several, the Bike paired (tracker `tracker`) and at home; Alice, its owner,
    /// at home too.
    static func scene() async throws -> (FindItemHarness, RecordingRemoteItems, RecordingRemoteBuckets, Int64) {
        let (f, remote, _) = try await RemoteItemsTests.scene()
        let buckets = RecordingRemoteBuckets()
        f.h.hub.buckets.remote = buckets
        let paired = try await f.call { f.h.hub.trackers.pair(f.alice, item: f.item, device: "bike-9", $0) }.get()
        try await f.settle()
        let tracker = paired.record.id
        try await Self.report(f, tracker: tracker, north: 0)
        f.arrive(1)
        f.h.events.clear()
        return (f, remote, buckets, tracker)
    }

    /// The Bike's fix `north` metres from home, committed (as any node's ingest does) and heard here from another
    /// node.
    static func report(_ f: FindItemHarness, tracker: Int64, north: Double, heard: Bool = true) async throws {
        let fix = Fix(
            lat: FindItemHarness.home.lat + north / FindItemHarness.metresPerDegree, lon: FindItemHarness.home.lon,
            acc: 5, ts: f.h.clock.now())
        _ = try await f.h.trackers.recordTrackerFix(tracker: tracker, fix: fix)
        if heard { f.h.hub.trackers.remoteMoved(ItemPosition(item: f.item, fix: fix), tracker: tracker, viewers: [1]) }
        try await f.settle()
    }

    @Test func anAlertedItemIsFollowedWhileItsOwnerIsHere() async throws {
        let (f, remote, _, _) = try await Self.scene()
        #expect(remote.follows.isEmpty)
        _ = try await f.update(f.alice, ItemChanges(alert: true)).get()
        #expect(remote.follows == [f.item: 1])
        f.h.hub.sessions.close(1)  // Alice's only connection here
        #expect(remote.follows.isEmpty)
        _ = f.h.connect(7, as: 1)
        #expect(remote.follows == [f.item: 1])
        _ = try await f.update(f.alice, ItemChanges(alert: false)).get()
        #expect(remote.follows.isEmpty)
    }

    @Test func aMoveHeardFromAnotherNodeRaisesTheAlarmForTheOwnerHere() async throws {
        let (f, _, _, tracker) = try await Self.scene()
        _ = try await f.update(f.alice, ItemChanges(alert: true)).get()
        try await f.settle()
        f.walk(1, north: 300)
        f.wait(60_000)
        #expect(f.alerts.map(\.name) == ["item.left_behind"])
        // The Bike's tracker reports to another node, near where Alice stands now: reunited, judged here.
        try await Self.report(f, tracker: tracker, north: 290)
        #expect(f.alerts.map(\.name) == ["item.left_behind", "item.reunited"])
        #expect(f.alerts.last?.users == [1])
    }

    @Test func anOldPositionIsNotJudgedUntilTheLatestFixIsRead() async throws {
        let (f, _, _, tracker) = try await Self.scene()
        // Alice walked away with the Bike while nobody here followed it: its fixes were committed elsewhere, unheard.
        f.walk(1, north: 2_000)
        f.walk(1, north: 2_000)
        try await Self.report(f, tracker: tracker, north: 2_000, heard: false)
        #expect(f.h.hub.trackers.position(of: f.item)?.lat == FindItemHarness.home.lat)  // still home, here
        // The alert goes on: the hooks run as the update lands, and the tracker's fix is read after it.
        let land = try await f.hold {
            f.h.hub.buckets.updateItem(f.alice, item: f.item, changes: ItemChanges(alert: true)) { _ in }
        }
        land()
        #expect(f.h.hub.trackers.unverified.contains(f.item))
        #expect(f.h.hub.trackers.leftBehindPairs == 0, "not judged against a position from long ago")
        try await f.settle()
        #expect(!f.h.hub.trackers.unverified.contains(f.item))
        f.wait(120_000)
        #expect(f.alerts.isEmpty)
    }

    @Test func aBucketChangedElsewhereIsReadAgainAndApplied() async throws {
        let (f, remote, _, tracker) = try await Self.scene()
        // Alert turned on through another node.
        _ = try await f.h.buckets.updateItem(id: f.item, changes: ItemChanges(alert: true), by: 1)
        f.h.hub.trackers.applyRemoteBucketTouched(f.bucket)
        try await f.settle()
        #expect(f.h.hub.trackers.alerting[f.item]?.owners == [1])
        #expect(remote.follows == [f.item: 1])
        // And off again.
        _ = try await f.h.buckets.updateItem(id: f.item, changes: ItemChanges(alert: false), by: 1)
        f.h.hub.trackers.applyRemoteBucketTouched(f.bucket)
        try await f.settle()
        #expect(f.h.hub.trackers.alerting[f.item] == nil && remote.follows.isEmpty)
        // The item deleted there: its position and state go here, and a fix for it heard late is ignored.
        try await f.h.buckets.deleteItem(id: f.item)
        f.h.hub.trackers.itemsGone([f.item])
        f.h.hub.trackers.applyRemoteBucketTouched(f.bucket)
        try await f.settle()
        #expect(f.h.hub.trackers.position(of: f.item) == nil)
        try await Self.report(f, tracker: tracker, north: 10)
        #expect(f.h.hub.trackers.position(of: f.item) == nil)
    }

    @Test func aBucketDeletedElsewhereTakesItsAlertsWithIt() async throws {
        let (f, remote, _, _) = try await Self.scene()
        _ = try await f.update(f.alice, ItemChanges(alert: true)).get()
        try await f.h.buckets.deleteBucket(id: f.bucket)
        f.h.hub.trackers.applyRemoteBucketTouched(f.bucket)
        try await f.settle()
        #expect(f.h.hub.trackers.alerting.isEmpty && remote.follows.isEmpty)
        f.h.hub.trackers.itemsGone([f.item])
        #expect(f.h.hub.trackers.position(of: f.item) == nil)
    }

    @Test func aReadOvertakenByAChangeHereIsReadAgain() async throws {
        let (f, _, _, _) = try await Self.scene()
        // Another node's change is being read (the store says: alert off) when Alice turns the alert on here.
        let land = try await f.hold { f.h.hub.trackers.applyRemoteBucketTouched(f.bucket) }
        _ = try await f.call(leaving: 1) {
            f.h.hub.buckets.updateItem(f.alice, item: f.item, changes: ItemChanges(alert: true), $0)
        }
        #expect(f.h.hub.trackers.alerting[f.item] != nil)
        land()
        try await f.settle()
        #expect(f.h.hub.trackers.alerting[f.item] != nil, "the older read did not undo the change made here")
    }

    @Test func everyCommittedChangeOfABucketIsToldOnce() async throws {
        let (f, _, buckets, _) = try await Self.scene()
        buckets.touched.removeAll()
        _ = try await f.update(f.alice, ItemChanges(alert: true)).get()
        #expect(buckets.touched == [f.bucket])
        #expect(buckets.gone.isEmpty)
        _ = try await f.call { f.h.hub.buckets.delete(f.alice, bucket: f.bucket, $0) }.get()
        #expect(buckets.touched == [f.bucket, f.bucket])
        #expect(buckets.gone == [f.item])
    }

    @Test func aCatchUpReadAppliesAlertChangesThisNodeMissed() async throws {
        let (f, remote, _, _) = try await Self.scene()
        // Turned on through another node, its message missed here.
        _ = try await f.h.buckets.updateItem(id: f.item, changes: ItemChanges(alert: true), by: 1)
        var changed: Result<Int, DomainError>?
        f.h.hub.trackers.resyncAlerts { changed = $0 }
        try await f.settle()
        #expect((try? changed?.get()) == 1)
        #expect(f.h.hub.trackers.alerting[f.item]?.owners == [1] && remote.follows == [f.item: 1])
        // Off again, missed too.
        _ = try await f.h.buckets.updateItem(id: f.item, changes: ItemChanges(alert: false), by: 1)
        f.h.hub.trackers.resyncAlerts { changed = $0 }
        try await f.settle()
        #expect((try? changed?.get()) == 1)
        #expect(f.h.hub.trackers.alerting.isEmpty && remote.follows.isEmpty)
        // A read overtaken by a change made here is not applied.
        _ = try await f.h.buckets.updateItem(id: f.item, changes: ItemChanges(alert: true), by: 1)
        let land = try await f.hold { f.h.hub.trackers.resyncAlerts { changed = $0 } }
        _ = try await f.call(leaving: 1) {
            f.h.hub.buckets.updateItem(f.alice, item: f.item, changes: ItemChanges(alert: false), $0)
        }
        land()
        try await f.settle()
        #expect((try? changed?.get()) == 0)
        #expect(f.h.hub.trackers.alerting.isEmpty)
    }
}
