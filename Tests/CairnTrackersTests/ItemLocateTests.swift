import CairnErrorCodes
import CairnHubTestSupport
import CairnLoop
import CairnSocial
import Synchronization
import Testing

// Finding an item, hiding it, and forgetting it, in domain terms: `item.locate` for anyone who can view the bucket
// (distance from the caller's own last position, walking or transit directions, exact URLs); a hidden item's position
// for the owners only, in `item.locate`, `items.watch` and `item.pos`; ghost mode hiding people, not things; a deleted
// item (alone or with its bucket) gone from memory and the tracker layer at once; and the per-user limits.
@testable import CairnBuckets
@testable import CairnCore
@testable import CairnHub
@testable import CairnSessions
@testable import CairnTrackers

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct ItemLocateTests {
    func locate(_ f: FindItemHarness, _ caller: Caller, _ item: Int64? = nil) async throws -> Result<
        ItemLocation, DomainError
    > {
        try await f.call { f.h.hub.trackers.locate(caller, item: item ?? f.item, $0) }
    }

    @Test func nearItIsWalkingWithTheDistanceAndExactLinks() async throws {
        let f = try await FindItemHarness()
        f.h.hub.trackers.moved(
            TrackerRecord(id: 1, device: "bike-1", item: f.item, active: true, created: 0),
            Fix(lat: 48, lon: 2, acc: 12.3, bat: 80, ts: 5))
        f.walk(1, north: 500)
        let found = try await locate(f, f.alice).get()
        #expect(found.item == f.item)
        #expect(found.position?.lat == 48 && found.position?.acc == 12.3 && found.position?.bat == 80)
        #expect(found.distance == 500)
        let nav = try #require(found.navigate)
        #expect(nav.mode == .walking)
        #expect(nav.geo == "geo:48.000000,2.000000;u=13")
        #expect(nav.apple == "https://maps.apple.com/?saddr=48.004497,2.000000&daddr=48.000000,2.000000&dirflg=w")
        #expect(
            nav.google
                == "https://www.google.com/maps/dir/?api=1&origin=48.004497,2.000000"
                + "&destination=48.000000,2.000000&travelmode=walking")
    }

    @Test func farIsTransitAndUnknownIsTransitFromThePhone() async throws {
        let f = try await FindItemHarness()
        try await f.bikeAt(north: 0)
        // Bob, a viewer, has never reported a position: no distance, directions from wherever his phone is.
        let unknown = try await locate(f, f.bob).get()
        #expect(unknown.position != nil && unknown.distance == nil)
        #expect(unknown.navigate?.mode == .transit)
        #expect(unknown.navigate?.geo == "geo:48.000000,2.000000")  // no accuracy, no uncertainty
        #expect(unknown.navigate?.apple == "https://maps.apple.com/?daddr=48.000000,2.000000&dirflg=r")
        #expect(
            unknown.navigate?.google
                == "https://www.google.com/maps/dir/?api=1&destination=48.000000,2.000000&travelmode=transit")
        f.walk(2, north: 1_501)
        let far = try await locate(f, f.bob).get()
        #expect(far.distance == 1_501 && far.navigate?.mode == .transit)
        #expect(far.navigate?.apple.hasSuffix("&dirflg=r") == true)
        f.walk(2, north: 1_500)
        #expect(try await locate(f, f.bob).get().navigate?.mode == .walking)
    }

    @Test func theWalkingThresholdIsAnOption() async throws {
        let f = try await FindItemHarness { $0.walkingDistance = 100 }
        try await f.bikeAt(north: 0)
        f.walk(1, north: 400)
        #expect(try await locate(f, f.alice).get().navigate?.mode == .transit)
    }

    @Test func noPositionNoDirectionsAndStrangersGetNotFound() async throws {
        let f = try await FindItemHarness()
        let none = try await locate(f, f.alice).get()
        #expect(none.position == nil && none.distance == nil && none.navigate == nil)
        try await f.bikeAt(north: 0)
        #expect(try await locate(f, f.carol).failure?.code == .notFound)
        #expect(try await locate(f, f.alice, 999).failure?.code == .notFound)
        #expect(try await locate(f, f.alice, 0).failure?.code == .badRequest)
    }

    @Test func aHiddenItemIsPositionedForOwnersOnly() async throws {
        let f = try await FindItemHarness()
        try await f.bikeAt(north: 0)
        let hidden = try await f.update(f.alice, ItemChanges(hidden: true)).get()
        #expect(hidden.record.hidden)
        // locate
        let forBob = try await locate(f, f.bob).get()
        #expect(forBob.position == nil && forBob.navigate == nil && forBob.distance == nil)
        #expect(try await locate(f, f.alice).get().position?.lat == 48)
        // items.watch answers
        let bobSees = try await f.call { f.h.hub.trackers.watch(f.bob, $0) }.get()
        #expect(bobSees.isEmpty)
        let aliceSees = try await f.call { f.h.hub.trackers.watch(f.alice, $0) }.get()
        #expect(aliceSees.map(\.item) == [f.item])
        // item.pos pushes
        try await f.bikeAt(north: 10)
        #expect(f.h.events.itemsMoved.map(\.connections) == [[1]])
        // Shown again: Bob hears the next move.
        _ = try await f.update(f.alice, ItemChanges(hidden: false)).get()
        try await f.bikeAt(north: 20)
        #expect(f.h.events.itemsMoved.last?.connections == [1, 2])
        #expect(try await locate(f, f.bob).get().position != nil)
    }

    @Test func ghostModeDoesNotHideItems() async throws {
        let f = try await FindItemHarness()
        _ = try await f.call { f.h.hub.social.pause(f.alice, forSeconds: nil, $0) }.get()
        _ = try await f.call { f.h.hub.trackers.watch(f.bob, $0) }.get()
        try await f.bikeAt(north: 0)
        #expect(f.h.events.itemsMoved.map(\.connections) == [[2]])
        #expect(try await locate(f, f.bob).get().position != nil)
    }

    @Test func aDeletedItemIsForgottenAtOnce() async throws {
        let f = try await FindItemHarness()
        try await f.bikeAt(north: 0)
        let centre = try #require(GeoPointFactory.point(48, 2))
        #expect(f.h.hub.trackers.items(within: 100, of: centre) == [f.item])
        _ = try await f.call { f.h.hub.buckets.deleteItem(f.alice, item: f.item, $0) }.get()
        #expect(f.h.hub.trackers.position(of: f.item) == nil)
        #expect(f.h.hub.trackers.items(within: 100, of: centre).isEmpty)
    }

    @Test func aDeletedBucketsItemsAreForgottenAtOnce() async throws {
        let f = try await FindItemHarness()
        let other = try await f.call {
            f.h.hub.buckets.createItem(f.alice, bucket: f.bucket, name: "Bag", photo: nil, note: nil, $0)
        }.get().record.id
        try await f.bikeAt(north: 0)
        f.h.hub.trackers.moved(
            TrackerRecord(id: 2, device: "bag-1", item: other, active: true, created: 0), Fix(lat: 48, lon: 2, ts: 9))
        _ = try await f.update(f.alice, ItemChanges(alert: true)).get()
        f.arrive(1, north: 500)
        #expect(f.h.hub.trackers.leftBehindPairs == 1)
        _ = try await f.call { f.h.hub.buckets.delete(f.alice, bucket: f.bucket, $0) }.get()
        #expect(f.h.hub.trackers.position(of: f.item) == nil && f.h.hub.trackers.position(of: other) == nil)
        #expect(f.h.hub.trackers.items(within: 100, of: try #require(GeoPointFactory.point(48, 2))).isEmpty)
        #expect(f.h.hub.trackers.leftBehindPairs == 0)
        f.wait(120_000)
        #expect(f.alerts.isEmpty)
    }

    @Test func theGuestPurgeForgetsItemsOfBucketsItTookAndPurgedOwners() async throws {
        let f = try await FindItemHarness()
        _ = try await f.call { f.h.hub.buckets.share(f.alice, bucket: f.bucket, user: 4, role: "owner", $0) }.get()
        _ = try await f.update(f.alice, ItemChanges(alert: true)).get()
        try await f.bikeAt(north: 0)
        f.arrive(1, north: 500)
        f.arrive(4, north: 500)
        #expect(f.h.hub.trackers.leftBehindPairs == 2)
        // Dan's account is purged; Gear keeps Alice as owner, so the Bike stays and only Dan's pair goes.
        f.h.hub.guestExpiry.purged?(GuestPurge(users: [4]))
        #expect(f.h.hub.trackers.leftBehindPairs == 1)
        #expect(f.h.hub.trackers.position(of: f.item) != nil)
        f.wait(120_000)
        #expect(f.alerts.map(\.users) == [[1]])
        // Gear's last owner is purged: the store deleted the bucket and reports its items; memory forgets them.
        f.h.hub.guestExpiry.purged?(GuestPurge(users: [1], items: [f.item]))
        #expect(f.h.hub.trackers.position(of: f.item) == nil)
        #expect(f.h.hub.trackers.items(within: 100, of: try #require(GeoPointFactory.point(48, 2))).isEmpty)
        #expect(f.h.hub.trackers.leftBehindPairs == 0)
    }

    @Test func bucketsPerUserAndItemsPerBucketAreLimited() async throws {
        let f = try await FindItemHarness { c in
            c.bucketsPerUser = 2
            c.itemsPerBucket = 2
        }
        _ = try await f.call { f.h.hub.buckets.create(f.alice, name: "Two", privacy: nil, $0) }.get()
        let third = try await f.call { f.h.hub.buckets.create(f.alice, name: "Three", privacy: nil, $0) }
        #expect(third.failure?.code == .badRequest)
        #expect(third.failure?.message.contains("2 buckets") == true)
        #expect(f.h.buckets.state.withLock { $0.buckets.count } == 2)
        // Someone else still may.
        #expect((try? await f.call { f.h.hub.buckets.create(f.bob, name: "Mine", privacy: nil, $0) }.get()) != nil)
        _ = try await f.call {
            f.h.hub.buckets.createItem(f.alice, bucket: f.bucket, name: "Bag", photo: nil, note: nil, $0)
        }.get()
        let tooMany = try await f.call {
            f.h.hub.buckets.createItem(f.alice, bucket: f.bucket, name: "Tent", photo: nil, note: nil, $0)
        }
        #expect(tooMany.failure?.code == .badRequest)
        #expect(tooMany.failure?.message.contains("2 items") == true)
        #expect(f.h.buckets.state.withLock { s in s.items.values.filter { $0.bucket == f.bucket }.count } == 2)
    }

    @Test func safeZonesAreCheckedListedAndRemovedByTheirOwnerOnly() async throws {
        let f = try await FindItemHarness { $0.safeZonesPerUser = 2 }
        let zones = f.h.hub.safeZones
        func add(_ caller: Caller, _ name: String, _ lat: Double, _ lon: Double, _ radius: Double) async throws
            -> Result<SafeZone, DomainError>
        {
            try await f.call { zones.add(caller, name: name, lat: lat, lon: lon, radius: radius, $0) }
        }
        let tooLong = String(repeating: "x", count: 65)
        for (name, lat, lon, radius, field) in [
            ("  ", 48.0, 2.0, 100.0, "name"), (tooLong, 48, 2, 100, "name"), ("Home", 91, 2, 100, "lat"),
            ("Home", 48, -181, 100, "lon"), ("Home", 48, 2, 9, "radius"), ("Home", 48, 2, 50_001, "radius"),
            ("Home", 48, 2, .nan, "radius"),
        ] {
            let refused = try await add(f.alice, name, lat, lon, radius)
            #expect(refused.failure?.code == .badRequest)
            #expect(refused.failure?.message.contains("'\(field)'") == true, "\(field)")
        }
        #expect(f.h.safeZones.state.withLock { $0.zones.isEmpty })
        let home = try await add(f.alice, " Home ", 48, 2, 10).get()
        #expect(home.name == "Home" && home.radius == 10 && home.owner == 1)
        let work = try await add(f.alice, String(repeating: "é", count: 64), 48.1, 2.1, 50_000).get()
        let third = try await add(f.alice, "Gym", 48, 2, 100)
        #expect(third.failure?.code == .badRequest && third.failure?.message.contains("2 safe zones") == true)
        #expect(zones.list(f.alice).map(\.id) == [home.id, work.id])
        #expect(zones.list(f.bob).isEmpty)
        let notHis = try await f.call { zones.remove(f.bob, zone: home.id, $0) }
        #expect(notHis.failure?.code == .notFound)
        #expect(try await f.call { zones.remove(f.alice, zone: home.id, $0) }.get() == home.id)
        #expect(try await f.call { zones.remove(f.alice, zone: home.id, $0) }.failure?.code == .notFound)
        #expect(zones.list(f.alice).map(\.id) == [work.id])
        // A failing store changes nothing.
        f.h.safeZones.state.withLock { $0.failWrites = true }
        #expect(try await add(f.alice, "Gym", 48, 2, 100).failure?.code == .internal)
        #expect(zones.list(f.alice).map(\.id) == [work.id])
    }

    @Test func coordinatesAreWrittenWithSixDecimals() {
        #expect(Navigation.decimal(0) == "0.000000")
        #expect(Navigation.decimal(-0.0000004) == "0.000000")
        #expect(Navigation.decimal(-0.0000006) == "-0.000001")
        #expect(Navigation.decimal(-33.8688197) == "-33.868820")
        #expect(Navigation.decimal(151.2092955) == "151.209296")
        #expect(Navigation.decimal(-180) == "-180.000000")
        #expect(Navigation.metres(0.2) == "1")
        #expect(Navigation.metres(0) == "0")
    }
}
