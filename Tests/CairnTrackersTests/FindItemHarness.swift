import CairnGeo
import CairnHub
import CairnHubTestSupport
import CairnLiveMap
import CairnLoop
import Testing

// A scene for finding items and left-behind alerts, in domain terms: Alice (1) owns Gear with a Bike; Bob (2), her
// friend, views Gear; Dan (4), her friend, co-owns it when a test shares it so; Carol (3) is a stranger. The Bike's
// tracker reports through `Trackers.moved` (as the ingest hands committed fixes to the loop), people through the live
// map, and every store call is driven to completion on the test's loop (the manual clock never moves by itself).
@testable import CairnBuckets
@testable import CairnCore
@testable import CairnTrackers

@MainActor
final class FindItemHarness {
    let h: DomainHarness
    let alice: Caller
    let bob: Caller
    let carol: Caller
    let dan: Caller
    private(set) var bucket: Int64 = 0
    private(set) var item: Int64 = 0
    /// Where the Bike lies.
    static let home = (lat: 48.0, lon: 2.0)
    /// Metres per degree of latitude on Cairn's sphere.
    static let metresPerDegree = GeoPointFactory.point(0, 0)!.distance(to: GeoPointFactory.point(1, 0)!)

    init(configure: (inout HubConfiguration) -> Void = { _ in }) async throws {
        h = DomainHarness(configure: configure)
        try await h.makeUsers(4)
        try h.restore(friends: [(1, 2), (1, 4)])
        alice = h.connect(1, as: 1)
        bob = h.connect(2, as: 2)
        carol = h.connect(3, as: 3)
        dan = h.connect(4, as: 4)
        let gear = try await call { self.h.hub.buckets.create(self.alice, name: "Gear", privacy: nil, $0) }.get()
        bucket = gear.record.id
        item = try await call {
            self.h.hub.buckets.createItem(self.alice, bucket: self.bucket, name: "Bike", photo: nil, note: nil, $0)
        }.get().record.id
        _ = try await call {
            self.h.hub.buckets.share(self.alice, bucket: self.bucket, user: 2, role: "viewer", $0)
        }.get()
        h.events.clear()
    }

    /// Runs `start`, then the loop's jobs until nothing is in flight; the outcome.
    func call<T>(_ start: (@escaping Outcome<T>) -> Void) async throws -> Result<T, DomainError> {
        var outcome: Result<T, DomainError>?
        start { outcome = $0 }
        try await settle()
        return try #require(outcome)
    }

    /// Runs the loop's jobs until no store work is in flight but the `held` jobs' (see `hold`).
    func settle(leaving held: Int = 0) async throws {
        while h.hub.operationsInFlight > held { try await h.scheduler.run() }
    }

    /// Runs `start` and holds the loop job its store work comes back with, so that other work can overtake it (the
    /// only work in flight when called); run the result to let it land.
    func hold(_ start: () -> Void) async throws -> () -> Void {
        #expect(h.hub.operationsInFlight == 0)
        start()
        let jobs = try await h.scheduler.hold()
        return { for job in jobs { job() } }
    }

    /// Runs `start` (an op) to completion while held work stays in flight; its outcome.
    func call<T>(leaving held: Int, _ start: (@escaping Outcome<T>) -> Void) async throws -> Result<T, DomainError> {
        var outcome: Result<T, DomainError>?
        start { outcome = $0 }
        try await settle(leaving: held)
        return try #require(outcome)
    }

    /// The Bike's positions pushed to `connection` so far.
    func pushes(to connection: ConnectionID) -> Int {
        h.events.itemsMoved.filter { $0.connections.contains(connection) }.count
    }

    /// Changes the Bike as `caller`.
    func update(_ caller: Caller, _ changes: ItemChanges) async throws -> Result<ItemView, DomainError> {
        try await call { self.h.hub.buckets.updateItem(caller, item: self.item, changes: changes, $0) }
    }

    /// The Bike's tracker reports it `north` metres north of home, with accuracy `acc`.
    func bikeAt(north: Double, acc: Double? = nil) async throws {
        let fix = Fix(
            lat: Self.home.lat + north / Self.metresPerDegree, lon: Self.home.lon, acc: acc, ts: h.clock.now())
        h.hub.trackers.moved(TrackerRecord(id: 1, device: "bike-1", item: item, active: true, created: 0), fix)
        try await settle()
    }

    /// `user` reports standing `north` metres north of the Bike's home, with accuracy `acc` (10 s after the last
    /// report, so every move here is plausible and the live map's `moved` hook fires).
    func walk(_ user: Int64, north: Double, acc: Double? = nil) {
        h.clock.advance(by: 10_000)
        let fix = Fix(
            lat: Self.home.lat + north / Self.metresPerDegree, lon: Self.home.lon, acc: acc, ts: h.clock.now())
        h.hub.liveMap.acceptFix(fix, for: user, now: h.clock.now())
    }

    /// Starts `user`'s session at home: the first fix of a session is not yet trusted, the second one is.
    func arrive(_ user: Int64, north: Double = 0) {
        walk(user, north: north)
        walk(user, north: north)
    }

    /// Lets `ms` pass and runs the hub's tick.
    func wait(_ ms: Int64) {
        h.clock.advance(by: ms)
        h.hub.tick()
    }

    /// The left-behind and reunited events so far, as (name, item, distance, users).
    var alerts: [(name: String, item: Int64, distance: Double?, users: [Int64])] {
        h.events.toUsers.compactMap { event, users in
            switch event {
            case .itemLeftBehind(let item, let distance, _, _): ("item.left_behind", item, distance, users)
            case .itemReunited(let item): ("item.reunited", item, nil, users)
            default: nil
            }
        }
    }
}
