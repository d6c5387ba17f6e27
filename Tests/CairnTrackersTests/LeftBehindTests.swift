import CairnCore
import CairnErrorCodes
import CairnHub
import CairnHubTestSupport
import CairnLoop
import Synchronization
import Testing

// Left behind, in domain terms with a manual clock: the owner hears `item.left_behind` only after being farther than
// the distance continuously for the grace time (on the hub's tick), once; `item.reunited` only back within 80 % of
// the distance, so jitter around the boundary does not flap; a coarse fix cannot raise an alarm; nothing inside a
// safe zone; only owners, only with `alert` on, and the state follows the item's flags and owners.
@testable import CairnBuckets
@testable import CairnTrackers

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct LeftBehindTests {
    /// Alice arrives at the Bike, which has `alert` on (defaults: 150 m, 60 s).
    func scene() async throws -> FindItemHarness {
        let f = try await FindItemHarness()
        try await f.bikeAt(north: 0)
        f.arrive(1)
        _ = try await f.update(f.alice, ItemChanges(alert: true)).get()
        f.h.events.clear()
        return f
    }

    @Test func leftBehindOnlyAfterTheGraceTimeAndOnlyOnce() async throws {
        let f = try await scene()
        f.walk(1, north: 300)
        #expect(f.alerts.isEmpty)
        f.wait(59_000)  // 59 s after the far fix
        #expect(f.alerts.isEmpty)
        f.wait(1_000)  // 60 s
        #expect(f.alerts.map(\.name) == ["item.left_behind"])
        #expect(f.alerts.first?.users == [1])
        #expect(f.alerts.first?.item == f.item)
        #expect(f.alerts.first?.distance == 300)
        if case .itemLeftBehind(_, _, let lat, let lon)? = f.h.events.toUsers.last?.event {
            #expect(lat == FindItemHarness.home.lat && lon == FindItemHarness.home.lon)  // the item's position
        } else {
            Issue.record("no left-behind event")
        }
        // Staying away, moving further: no second alert.
        f.walk(1, north: 500)
        f.wait(120_000)
        #expect(f.alerts.count == 1)
    }

    @Test func anUntrustedOwnerFixCannotRaiseTheAlarm() async throws {
        let f = try await scene()
        f.walk(1, north: 1_000_000)  // 1,000 km in 10 s: reported, but not trusted
        try await f.bikeAt(north: 1)  // the item reports: it is compared with Alice's trusted position, at home
        f.wait(120_000)
        #expect(f.alerts.isEmpty)
        #expect(f.h.hub.trackers.leftBehindPairs == 0)
    }

    @Test func comingBackDuringTheGraceTimeCancelsIt() async throws {
        let f = try await scene()
        f.walk(1, north: 300)  // far at t
        f.wait(20_000)
        f.walk(1, north: 100)  // back within the distance at t+30 s: the stretch is broken
        f.walk(1, north: 300)  // far again at t+40 s
        f.wait(30_000)  // t+70 s: 70 s after the first far fix, 30 s after the second
        #expect(f.alerts.isEmpty)
        f.wait(30_000)  // 60 s after the second
        #expect(f.alerts.map(\.name) == ["item.left_behind"])
    }

    @Test func jitterAroundTheBoundaryDoesNotFlap() async throws {
        let f = try await scene()
        f.walk(1, north: 200)
        f.wait(60_000)
        #expect(f.alerts.map(\.name) == ["item.left_behind"])
        // Between 80 % of the distance (120 m) and beyond it: still left behind, nothing new.
        for north in [140.0, 160, 125, 155, 130, 170] {
            f.walk(1, north: north)
            f.wait(60_000)
        }
        #expect(f.alerts.map(\.name) == ["item.left_behind"])
        f.walk(1, north: 110)
        #expect(f.alerts.map(\.name) == ["item.left_behind", "item.reunited"])
        #expect(f.alerts.last?.users == [1])
        // Back near the boundary: just over it for a moment, then under it again, is never an alert.
        for north in [155.0, 140, 160, 145, 158, 130] {
            f.walk(1, north: north)
            f.wait(5_000)
        }
        f.wait(120_000)
        #expect(f.alerts.map(\.name) == ["item.left_behind", "item.reunited"])
        #expect(f.h.hub.trackers.leftBehindPairs == 0)
    }

    @Test func aCoarseFixCannotRaiseTheAlarm() async throws {
        let f = try await scene()
        f.walk(1, north: 200, acc: 60)  // 200 m, but could be 140 m: not surely farther than 150 m
        f.wait(120_000)
        #expect(f.alerts.isEmpty)
        try await f.bikeAt(north: 0, acc: 30)
        f.walk(1, north: 230, acc: 60)  // could be 140 m
        f.wait(120_000)
        #expect(f.alerts.isEmpty)
        f.walk(1, north: 260, acc: 60)  // at least 170 m
        f.wait(60_000)
        #expect(f.alerts.map(\.name) == ["item.left_behind"])
    }

    @Test func noAlertWhileTheItemIsInASafeZone() async throws {
        let f = try await scene()
        let zone = try await f.call {
            f.h.hub.safeZones.add(f.alice, name: "Home", lat: 48.0, lon: 2.0, radius: 50, $0)
        }.get()
        f.walk(1, north: 1_000)
        f.wait(300_000)
        #expect(f.alerts.isEmpty)
        // Another user's zone shelters nothing of Alice's.
        _ = try await f.call { f.h.hub.safeZones.add(f.bob, name: "Home", lat: 48.0, lon: 2.0, radius: 50, $0) }.get()
        // The zone removed, the next look arms the alert; the Bike moving out of a zone does too.
        _ = try await f.call { f.h.hub.safeZones.remove(f.alice, zone: zone.id, $0) }.get()
        f.walk(1, north: 1_001)
        f.wait(60_000)
        #expect(f.alerts.map(\.name) == ["item.left_behind"])
    }

    @Test func anItemMovingOutOfASafeZoneIsLookedAt() async throws {
        let f = try await scene()
        _ = try await f.call {
            f.h.hub.safeZones.add(f.alice, name: "Home", lat: 48.0, lon: 2.0, radius: 50, $0)
        }.get()
        f.walk(1, north: -500)
        f.wait(120_000)
        #expect(f.alerts.isEmpty)
        try await f.bikeAt(north: 100)  // taken out of the zone while Alice is away: 600 m from her
        f.wait(60_000)
        #expect(f.alerts.map(\.name) == ["item.left_behind"])
        #expect(f.alerts.first?.distance == 600)
    }

    @Test func onlyOwnersAreAlertedEachOnTheirOwn() async throws {
        let f = try await scene()
        _ = try await f.call { f.h.hub.buckets.share(f.alice, bucket: f.bucket, user: 4, role: "owner", $0) }.get()
        f.arrive(2, north: 2_000)  // Bob only views
        f.arrive(4, north: 0)  // Dan co-owns, and is with the Bike
        f.walk(2, north: 2_100)
        f.wait(120_000)
        #expect(f.alerts.isEmpty)
        f.walk(4, north: 400)
        f.wait(60_000)
        #expect(f.alerts.map(\.name) == ["item.left_behind"])
        #expect(f.alerts.first?.users == [4])  // not Alice, who is still with it
        // Dan no longer owns it: his state goes, and he hears nothing more.
        _ = try await f.call { f.h.hub.buckets.unshare(f.alice, bucket: f.bucket, user: 4, $0) }.get()
        f.walk(4, north: 0)
        #expect(f.alerts.count == 1)
        #expect(f.h.hub.trackers.leftBehindPairs == 0)
    }

    @Test func alertOffMeansNoAlertAndClearsWhatWasPending() async throws {
        let f = try await FindItemHarness()
        try await f.bikeAt(north: 0)
        f.arrive(1)
        f.walk(1, north: 500)
        f.wait(120_000)
        #expect(f.alerts.isEmpty)  // alert was never on
        _ = try await f.update(f.alice, ItemChanges(alert: true)).get()  // looked at at once: pending
        #expect(f.h.hub.trackers.leftBehindPairs == 1)
        _ = try await f.update(f.alice, ItemChanges(alert: false)).get()
        #expect(f.h.hub.trackers.leftBehindPairs == 0)
        f.wait(120_000)
        #expect(f.alerts.isEmpty)
    }

    @Test func onlyOwnersMaySwitchAlertsOrHiding() async throws {
        let f = try await scene()
        for changes in [ItemChanges(alert: false), ItemChanges(hidden: true), ItemChanges(done: true, alert: true)] {
            let refused = try await f.update(f.bob, changes)
            #expect(refused.failure?.code == .notOwner)
        }
        let stranger = try await f.update(f.carol, ItemChanges(alert: false))
        #expect(stranger.failure?.code == .notFound)
        #expect(f.h.buckets.state.withLock { $0.items[f.item]?.alert } == true)
        #expect(f.h.buckets.state.withLock { $0.items[f.item]?.hidden } == false)
    }

    @Test func theItemMovingAwayFromTheOwnerCountsToo() async throws {
        let f = try await scene()
        try await f.bikeAt(north: 800)  // someone rides off with it
        f.wait(59_000)
        #expect(f.alerts.isEmpty)
        f.wait(1_000)
        #expect(f.alerts.map(\.name) == ["item.left_behind"])
        #expect(f.alerts.first?.distance == 800)
        try await f.bikeAt(north: 50)
        #expect(f.alerts.map(\.name) == ["item.left_behind", "item.reunited"])
    }

    @Test func theGraceTimeAndDistanceAreOptions() async throws {
        let f = try await FindItemHarness { c in
            c.leftBehindDistance = 1_000
            c.leftBehindGraceMs = 0
        }
        try await f.bikeAt(north: 0)
        f.arrive(1)
        _ = try await f.update(f.alice, ItemChanges(alert: true)).get()
        f.walk(1, north: 900)
        #expect(f.alerts.isEmpty)
        f.walk(1, north: 1_100)  // at once: no grace
        #expect(f.alerts.map(\.name) == ["item.left_behind"])
    }

    @Test func alertsAreRestoredAtStart() async throws {
        let f = try await FindItemHarness()
        try await f.bikeAt(north: 0)
        f.h.hub.trackers.restore(alerts: [ItemAlertRecord(item: f.item, bucket: f.bucket, owners: [1])])
        f.arrive(1)
        f.walk(1, north: 400)
        f.wait(60_000)
        #expect(f.alerts.map(\.name) == ["item.left_behind"])
    }
}

extension Result {
    /// The error, when it failed.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
