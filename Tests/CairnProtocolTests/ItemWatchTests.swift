import CairnCore
import CairnGeo
import CairnHub
import CairnHubTestSupport
import CairnLoop
import CairnProtocol
import Testing

// `items.watch` and `item.pos` through the router, with tracker reports through the ingest: the watch answers the
// positions of the items the caller can view; a committed fix reaches every watching connection of everyone who can
// view the item's bucket — an owner, a viewer — and never a friend the bucket is not shared with or a stranger;
// latest wins per item; a late fix is not pushed; unsharing, unwatching and unpairing stop it, and an `item.pos` still
// waiting in a slot is withdrawn when access is lost or the connection stops watching; and the tracker layer of the
// index holds the item.
@testable import CairnLiveMap
@testable import CairnTrackers

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct ItemWatchTests {
    /// Alice (1) owns Gear with a Bike whose tracker is active; Bob (2) views Gear; Carol (3) is Alice's friend
    /// without a share; Mallory (4) a stranger. Everyone watches items.
    func setting() async throws -> (HubHarness, item: Int64, bucket: Int64, key: String, tracker: Int, bob: Int64) {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        let carol = try await h.user(3, "carol")
        _ = try await h.user(4, "mallory")
        try await h.befriend(1, alice, 2, bob)
        try await h.befriend(1, alice, 3, carol)
        let bucket = try await op(h, 1, #""bucket.create","name":"Gear""#)
        let bucketID = Int64(try #require((bucket["bucket"] as? [String: Any])?["id"] as? Int))
        let item = try await op(h, 1, #""item.create","bucket":\#(bucketID),"name":"Bike""#, jobs: 2)
        let itemID = Int64(try #require((item["item"] as? [String: Any])?["id"] as? Int))
        _ = try await op(h, 1, #""bucket.share","bucket":\#(bucketID),"user":\#(bob),"role":"viewer""#)
        let pair = try await op(h, 1, #""tracker.pair","item":\#(itemID),"device":"bike-1""#, jobs: 2)
        let tracker = try #require(pair["tracker"] as? [String: Any])
        let id = try #require(tracker["id"] as? Int)
        _ = try await op(h, 1, #""tracker.activate","tracker":\#(id)"#)
        for c: ConnectionID in 1...4 { _ = h.outbound.take(c) }
        return (h, itemID, bucketID, try #require(tracker["key"] as? String), id, bob)
    }

    func op(_ h: HubHarness, _ c: ConnectionID, _ body: String, jobs: Int = 1) async throws -> [String: Any] {
        try await h.request(c, #"{"id":7,"op":\#(body)}"#, id: 7, completions: jobs)
    }

    /// A report through the ingest, then the loop's jobs: the move and the viewers lookup.
    func report(_ h: HubHarness, key: String, lat: Double, ts: Int64, jobs: Int = 2) async throws {
        try await h.hub.trackerIngest.report(
            TrackerReport(device: "bike-1", key: key, position: PositionReport(lat: lat, lon: 2.3, bat: 85, ts: ts)))
        for _ in 0..<jobs { try await h.scheduler.run() }
    }

    func itemPos(_ h: HubHarness, _ c: ConnectionID, _ item: Int64) -> [String: Any]? {
        h.outbound.takeLatest(c)[-item]
    }

    @Test func viewersGetItemPosAndNobodyElseDoes() async throws {
        let (h, item, _, key, _, _) = try await setting()
        for c: ConnectionID in 1...4 {
            let watched = try await op(h, c, #""items.watch""#)
            #expect((watched["positions"] as? [Any])?.isEmpty == true)
        }
        let now = h.clock.now()
        try await report(h, key: key, lat: 48.8, ts: now)
        for c: ConnectionID in [1, 2] {
            let pushed = try #require(itemPos(h, c, item), "connection \(c)")
            #expect(pushed["ev"] as? String == "item.pos")
            #expect(pushed["item"] as? Int == Int(item))
            #expect(pushed["lat"] as? Double == 48.8)
            #expect(pushed["bat"] as? Double == 85)
            #expect(pushed["ts"] as? Int == Int(now))
        }
        for c: ConnectionID in [3, 4] {
            #expect(h.outbound.takeLatest(c).isEmpty, "connection \(c)")
            #expect(!h.outbound.take(c).contains { ($0["ev"] as? String)?.hasPrefix("item") == true })
        }
        // Watching again answers the current position; a stranger's watch shows nothing.
        let again = try await op(h, 2, #""items.watch""#)
        let positions = try #require(again["positions"] as? [[String: Any]])
        #expect(positions.map { $0["item"] as? Int } == [Int(item)])
        #expect(positions.first?["lat"] as? Double == 48.8)
        #expect((try await op(h, 4, #""items.watch""#)["positions"] as? [Any])?.isEmpty == true)
        #expect((try await op(h, 3, #""items.watch""#)["positions"] as? [Any])?.isEmpty == true)
        // The tracker layer holds the item where it was.
        #expect(h.hub.trackers.items(within: 100, of: try #require(GeoPoint(lat: 48.8, lon: 2.3))) == [item])
        #expect(h.hub.trackers.position(of: item)?.lat == 48.8)
    }

    @Test func latestWinsALateFixIsNotPushedAndLosingAccessStopsIt() async throws {
        let (h, item, bucket, key, tracker, bob) = try await setting()
        for c: ConnectionID in 1...2 { _ = try await op(h, c, #""items.watch""#) }
        let now = h.clock.now()
        // An hour apart, so that a degree of latitude is a plausible speed for the ingest's filters.
        try await report(h, key: key, lat: 10, ts: now - 7_200_000)
        try await report(h, key: key, lat: 11, ts: now - 3_600_000)
        #expect(itemPos(h, 2, item)?["lat"] as? Double == 11)
        // Older than the latest: stored nowhere, pushed to no one.
        try await report(h, key: key, lat: 9, ts: now - 18_000_000, jobs: 0)
        #expect(h.scheduler.pending == 0)
        #expect(h.outbound.takeLatest(2).isEmpty)
        #expect(h.hub.trackers.position(of: item)?.lat == 11)
        // Bob loses the share: the next move reaches Alice only.
        _ = try await op(h, 1, #""bucket.unshare","bucket":\#(bucket),"user":\#(bob)"#)
        _ = h.outbound.take(2)
        try await report(h, key: key, lat: 12, ts: now)
        #expect(itemPos(h, 1, item)?["lat"] as? Double == 12)
        #expect(h.outbound.takeLatest(2).isEmpty)
        // Alice stops watching: nothing more; unpairing forgets the position.
        _ = try await op(h, 1, #""items.unwatch""#, jobs: 0)
        try await report(h, key: key, lat: 12.001, ts: now + 1000)
        #expect(h.outbound.takeLatest(1).isEmpty)
        #expect(h.outbound.takeLatest(2).isEmpty)
        _ = try await op(h, 1, #""tracker.unpair","tracker":\#(tracker)"#, jobs: 2)
        #expect(h.hub.trackers.position(of: item) == nil)
        #expect(h.hub.trackers.items(within: 1_000_000, of: try #require(GeoPoint(lat: 13, lon: 2.3))).isEmpty)
    }

    @Test func aPendingItemPosIsWithdrawnWhenAccessIsLostOrWatchingStops() async throws {
        let (h, item, bucket, key, _, bob) = try await setting()
        for c: ConnectionID in 1...2 { _ = try await op(h, c, #""items.watch""#) }
        let now = h.clock.now()
        try await report(h, key: key, lat: 10, ts: now - 3_600_000)  // waiting in both slots, not yet written
        _ = try await op(h, 1, #""bucket.unshare","bucket":\#(bucket),"user":\#(bob)"#)
        #expect(itemPos(h, 2, item) == nil)  // Bob lost the share: his is withdrawn
        #expect(h.outbound.latest[1]?[-item] != nil)  // Alice's stays
        _ = try await op(h, 1, #""items.unwatch""#, jobs: 0)
        #expect(itemPos(h, 1, item) == nil)
    }
}
