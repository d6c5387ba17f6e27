import CairnCore
import CairnHub
import CairnHubTestSupport
import CairnLoop
import CairnProtocol
import Synchronization
import Testing

// Trackers through the router: pairing returns the key once and stores only its digest; activate, deactivate and
// unpair; device ids checked and unique across the hub; only owners of the item's bucket may do any of it (viewers
// get `not_owner`, strangers `not_found`); and a refusal or a failed write leaves every tracker as it was.
@testable import CairnLiveMap
@testable import CairnTrackers

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct TrackerOpsTests {
    /// Alice (1) owns a bucket with two items, shared with her friend Bob (2) as viewer; Mallory (4) is a stranger.
    func setting() async throws -> (HubHarness, bucket: Int64, items: [Int64], bob: Int64) {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        try await h.befriend(1, alice, 2, bob)
        _ = try await h.user(4, "mallory")
        let created = try await op(h, 1, #""bucket.create","name":"Gear""#)
        let bucket = Int64(try #require((created["bucket"] as? [String: Any])?["id"] as? Int))
        var items: [Int64] = []
        for name in ["Bike", "Bag"] {
            let item = try await op(h, 1, #""item.create","bucket":\#(bucket),"name":"\#(name)""#, jobs: 2)
            items.append(Int64(try #require((item["item"] as? [String: Any])?["id"] as? Int)))
        }
        _ = try await op(h, 1, #""bucket.share","bucket":\#(bucket),"user":\#(bob),"role":"viewer""#)
        for c: ConnectionID in [1, 2, 4] { _ = h.outbound.take(c) }
        return (h, bucket, items, bob)
    }

    func op(_ h: HubHarness, _ c: ConnectionID, _ body: String, jobs: Int = 1) async throws -> [String: Any] {
        try await h.request(c, #"{"id":7,"op":\#(body)}"#, id: 7, completions: jobs)
    }

    func tracker(_ reply: [String: Any]) throws -> [String: Any] {
        try #require(reply["tracker"] as? [String: Any], "no tracker in \(reply)")
    }

    func stored(_ h: HubHarness) -> [Int64: TrackerRecord] { h.trackers.state.withLock { $0.trackers } }

    @Test func pairShowsTheKeyOnceAndStoresOnlyItsDigest() async throws {
        let (h, bucket, items, _) = try await setting()
        let paired = try tracker(
            try await op(h, 1, #""tracker.pair","item":\#(items[0]),"device":"862061048023666""#, jobs: 2))
        let id = Int64(try #require(paired["id"] as? Int))
        #expect(paired["device"] as? String == "862061048023666")
        #expect(paired["item"] as? Int == Int(items[0]))
        #expect(paired["active"] as? Bool == false)
        let key = try #require(paired["key"] as? String)
        #expect(key.utf8.count == 43)
        let digest = h.trackers.state.withLock { $0.digests[id] }
        #expect(digest == Trackers.keyDigest(key))
        #expect(digest.map { !$0.isEmpty } == true)
        #expect(stored(h)[id]?.active == false)
        // The item names its tracker, and the bucket's viewers hear that it changed.
        #expect(h.outbound.take(2).contains { $0["ev"] as? String == "bucket.changed" })
        let got = try await op(h, 2, #""bucket.get","bucket":\#(bucket)"#)
        #expect((got["items"] as? [[String: Any]])?.first?["tracker"] as? Int == Int(id))

        let active = try tracker(try await op(h, 1, #""tracker.activate","tracker":\#(id)"#))
        #expect(active["active"] as? Bool == true)
        #expect(active["key"] == nil)
        #expect(stored(h)[id]?.active == true)
        let inactive = try tracker(try await op(h, 1, #""tracker.deactivate","tracker":\#(id)"#))
        #expect(inactive["active"] as? Bool == false)
        #expect(stored(h)[id]?.active == false)

        let gone = try await op(h, 1, #""tracker.unpair","tracker":\#(id)"#, jobs: 2)
        #expect(gone["tracker"] as? Int == Int(id))
        #expect(stored(h).isEmpty)
        #expect(h.outbound.take(2).contains { $0["ev"] as? String == "bucket.changed" })
        let after = try await op(h, 2, #""bucket.get","bucket":\#(bucket)"#)
        #expect((after["items"] as? [[String: Any]])?.first?["tracker"] == nil)
        #expect(errorCode(try await op(h, 1, #""tracker.activate","tracker":\#(id)"#)) == "not_found")
        #expect(errorCode(try await op(h, 1, #""tracker.unpair","tracker":\#(id)"#)) == "not_found")
        // The device id is free again, and a new pairing gets a new key.
        let again = try tracker(
            try await op(h, 1, #""tracker.pair","item":\#(items[0]),"device":"862061048023666""#, jobs: 2))
        #expect(again["key"] as? String != key)
    }

    @Test func badRequestsChangeNothing() async throws {
        let (h, _, items, _) = try await setting()
        for bad in [
            #""tracker.pair","item":\#(items[0]),"device":"""#,
            #""tracker.pair","item":\#(items[0]),"device":"\#(String(repeating: "a", count: 65))""#,
            #""tracker.pair","item":\#(items[0]),"device":"has space""#,
            #""tracker.pair","item":\#(items[0]),"device":"caf\u00e9""#,
            #""tracker.pair","item":\#(items[0]),"device":"a/b""#,
            #""tracker.pair","item":0,"device":"abc""#,
            #""tracker.pair","item":\#(items[0])"#,
            #""tracker.pair","device":"abc""#,
            #""tracker.pair","item":"1","device":"abc""#,
            #""tracker.activate","tracker":0"#,
            #""tracker.deactivate""#,
            #""tracker.unpair","tracker":-3"#,
        ] {
            #expect(errorCode(try await op(h, 1, bad, jobs: 0)) == "bad_request", "\(bad)")
        }
        #expect(stored(h).isEmpty)
        let longest = String(repeating: "Z", count: 64)
        let ok = try await op(
            h, 1, #""tracker.pair","item":\#(items[0]),"device":"a.B_9:\#(longest.prefix(57))-""#, jobs: 2)
        #expect((try tracker(ok))["device"] as? String == "a.B_9:\(longest.prefix(57))-")
        #expect(errorCode(try await op(h, 1, #""tracker.pair","item":999,"device":"other""#)) == "not_found")
        #expect(stored(h).count == 1)
    }

    @Test func deviceIdsAreUniqueAndAnItemHasOneTracker() async throws {
        let (h, _, items, _) = try await setting()
        let first = try tracker(try await op(h, 1, #""tracker.pair","item":\#(items[0]),"device":"dev-1""#, jobs: 2))
        let taken = try await op(h, 1, #""tracker.pair","item":\#(items[1]),"device":"dev-1""#)
        #expect(errorCode(taken) == "device_taken")
        let second = try await op(h, 1, #""tracker.pair","item":\#(items[0]),"device":"dev-2""#)
        #expect(errorCode(second) == "bad_request")
        #expect(stored(h).count == 1)
        #expect(stored(h).values.first?.device == "dev-1")
        #expect(first["item"] as? Int == Int(items[0]))
    }

    @Test func onlyOwnersPairAndStrangersLearnNothing() async throws {
        let (h, bucket, items, bob) = try await setting()
        let paired = try tracker(try await op(h, 1, #""tracker.pair","item":\#(items[0]),"device":"dev-1""#, jobs: 2))
        let id = try #require(paired["id"] as? Int)
        // Bob views the bucket: told he is not an owner.
        let viewerPair = try await op(h, 2, #""tracker.pair","item":\#(items[1]),"device":"bobs""#)
        #expect(errorCode(viewerPair) == "not_owner")
        for verb in ["activate", "deactivate", "unpair"] {
            #expect(errorCode(try await op(h, 2, #""tracker.\#(verb)","tracker":\#(id)"#)) == "not_owner", "\(verb)")
        }
        // Mallory cannot view it: no such item or tracker, as for one that does not exist.
        let strangerPair = try await op(h, 4, #""tracker.pair","item":\#(items[1]),"device":"mals""#)
        #expect(errorCode(strangerPair) == "not_found")
        #expect((strangerPair["error"] as? [String: Any])?["message"] as? String == "no item \(items[1])")
        for verb in ["activate", "deactivate", "unpair"] {
            let reply = try await op(h, 4, #""tracker.\#(verb)","tracker":\#(id)"#)
            #expect(errorCode(reply) == "not_found", "\(verb)")
            #expect((reply["error"] as? [String: Any])?["message"] as? String == "no tracker \(id)")
        }
        #expect(stored(h).count == 1)
        #expect(stored(h)[Int64(id)]?.active == false)
        // Made a co-owner, Bob may.
        _ = try await op(h, 1, #""bucket.share","bucket":\#(bucket),"user":\#(bob),"role":"owner""#)
        let activated = try tracker(try await op(h, 2, #""tracker.activate","tracker":\#(id)"#))
        #expect(activated["active"] as? Bool == true)
    }

    /// Bob, made a co-owner, pairs the Bike with a phone he keeps, and Alice lets it see the bucket. Once Bob is
    /// unshared (or made a viewer), his phone's reports are refused as an inactive tracker's and it is shown nothing;
    /// Alice's own tracker keeps working, and Alice sees and revokes Bob's tracker (`tracker.list`, `paired_by`).
    @Test func aTrackerIsCutOffOnceWhoeverPairedItIsNoLongerAnOwner() async throws {
        let (h, bucket, items, bob) = try await setting()
        _ = try await op(h, 1, #""bucket.share","bucket":\#(bucket),"user":\#(bob),"role":"owner""#)
        let bobs = try tracker(try await op(h, 2, #""tracker.pair","item":\#(items[0]),"device":"bobs""#, jobs: 2))
        let alices = try tracker(try await op(h, 1, #""tracker.pair","item":\#(items[1]),"device":"alices""#, jobs: 2))
        #expect(bobs["paired_by"] as? Int == Int(bob) && bobs["pairer_left"] as? Bool == false)
        #expect(alices["paired_by"] as? Int == 1)
        let (bobsID, alicesID) = (try #require(bobs["id"] as? Int), try #require(alices["id"] as? Int))
        let (bobsKey, alicesKey) = (try #require(bobs["key"] as? String), try #require(alices["key"] as? String))
        for id in [bobsID, alicesID] {
            _ = try await op(h, 1, #""tracker.activate","tracker":\#(id)"#)
            _ = try await op(h, 1, #""tracker.update","tracker":\#(id),"show_items":true"#)
        }
        let ingest = h.hub.trackerIngest
        let lookup = h.hub.trackerLookup
        /// A report a minute later, a few metres on; an accepted one's move is then run on the loop.
        func report(_ device: String, _ key: String, lat: Double) async throws -> IngestReceipt {
            h.clock.advance(by: 60_000)
            let position = PositionReport(lat: lat, lon: 2, ts: h.clock.now())
            let receipt = try await ingest.report(TrackerReport(device: device, key: key, position: position))
            try await h.scheduler.run()
            return receipt
        }
        _ = try await report("alices", alicesKey, lat: 48.0)
        let before = try await report("bobs", bobsKey, lat: 48.1)
        #expect(try await lookup.bucketMates(of: before.tracker).map(\.item) == [items[1]])

        _ = try await op(h, 1, #""bucket.unshare","bucket":\#(bucket),"user":\#(bob)"#)
        // Refused as an inactive tracker is, by key and by device, and shown nothing; nothing stored.
        await #expect(throws: IngestRefusal.inactive) { try await report("bobs", bobsKey, lat: 48.1001) }
        await #expect(throws: IngestRefusal.inactive) { try await lookup.tracker(key: bobsKey) }
        await #expect(throws: IngestRefusal.inactive) { try await lookup.tracker(device: "bobs", key: bobsKey) }
        #expect(try await lookup.bucketMates(of: before.tracker) == [])
        #expect(h.trackers.state.withLock { $0.fixes[Int64(bobsID)]?.lat } == 48.1)
        // Alice's own tracker is untouched.
        #expect(try await report("alices", alicesKey, lat: 48.0001).latest?.lat == 48.0001)

        // Alice sees every tracker of the bucket, who paired it and that Bob's pairer left; Bob sees nothing now.
        let listed = try await op(h, 1, #""tracker.list","bucket":\#(bucket)"#)
        let trackers = try #require(listed["trackers"] as? [[String: Any]])
        #expect(trackers.map { $0["id"] as? Int } == [bobsID, alicesID])
        #expect(trackers.map { $0["paired_by"] as? Int } == [Int(bob), 1])
        #expect(trackers.map { $0["pairer_left"] as? Bool } == [true, false])
        #expect(trackers.allSatisfy { $0["key"] == nil })
        #expect(errorCode(try await op(h, 2, #""tracker.list","bucket":\#(bucket)"#)) == "not_found")
        // Made an owner again, Bob's tracker is his to use again; made a viewer, it is cut off again, and he is
        // told he is not an owner when he lists the bucket's trackers.
        _ = try await op(h, 1, #""bucket.share","bucket":\#(bucket),"user":\#(bob),"role":"owner""#)
        #expect(try await report("bobs", bobsKey, lat: 48.1002).latest?.lat == 48.1002)
        _ = try await op(h, 1, #""bucket.share","bucket":\#(bucket),"user":\#(bob),"role":"viewer""#)
        await #expect(throws: IngestRefusal.inactive) { try await report("bobs", bobsKey, lat: 48.1003) }
        #expect(errorCode(try await op(h, 2, #""tracker.list","bucket":\#(bucket)"#)) == "not_owner")
        // Any owner revokes any tracker, not only its pairer.
        let off = try tracker(try await op(h, 1, #""tracker.deactivate","tracker":\#(bobsID)"#))
        #expect(off["active"] as? Bool == false && off["paired_by"] as? Int == Int(bob))
        _ = try await op(h, 1, #""tracker.unpair","tracker":\#(bobsID)"#, jobs: 2)
        #expect(stored(h)[Int64(bobsID)] == nil)
        #expect(errorCode(try await op(h, 1, #""tracker.list","bucket":0"#, jobs: 0)) == "bad_request")
        #expect(errorCode(try await op(h, 4, #""tracker.list","bucket":\#(bucket)"#)) == "not_found")
    }

    @Test func aFailedWriteIsInternalAndChangesNothing() async throws {
        let (h, _, items, _) = try await setting()
        let paired = try tracker(try await op(h, 1, #""tracker.pair","item":\#(items[0]),"device":"dev-1""#, jobs: 2))
        let id = try #require(paired["id"] as? Int)
        h.trackers.state.withLock { $0.failWrites = true }
        #expect(errorCode(try await op(h, 1, #""tracker.pair","item":\#(items[1]),"device":"dev-2""#)) == "internal")
        #expect(errorCode(try await op(h, 1, #""tracker.activate","tracker":\#(id)"#)) == "internal")
        #expect(errorCode(try await op(h, 1, #""tracker.unpair","tracker":\#(id)"#)) == "internal")
        h.trackers.state.withLock { $0.failWrites = false }
        #expect(stored(h).count == 1)
        #expect(stored(h)[Int64(id)]?.active == false)
    }
}
