import CairnBuckets
import CairnHub
import CairnHubTestSupport
import CairnLoop
import CairnProtocol
import Synchronization
import Testing

// Buckets and items through the router: every op, its validation, the seed's refusals to non-owners, sharing only
// with friends, `friends` privacy, access lost when a friendship ends, and pushes that reach every viewer's
// connections and nobody else.
@testable import CairnMedia

private struct TestSigner: MediaSigner {
    func url(for media: String, now: Int64) -> String { "/v1/media/\(media)?exp=\(now + 1000)&sig=test" }
}

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct BucketOpsTests {
    /// Alice on 1, Bob on 2 and 3 (two devices), friends; Mallory on 4, a stranger.
    func people() async throws -> (HubHarness, Int64, Int64, Int64) {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        try await h.befriend(1, alice, 2, bob)
        h.router.connectionOpened(3, token: nil)
        _ = try await h.request(3, #"{"id":1,"op":"login","username":"bob","password":"password1"}"#, completions: 1)
        let mallory = try await h.user(4, "mallory")
        for c: ConnectionID in 1...4 { _ = h.outbound.take(c) }
        return (h, alice, bob, mallory)
    }

    func op(_ h: HubHarness, _ c: ConnectionID, _ body: String, jobs: Int = 1) async throws -> [String: Any] {
        try await h.request(c, #"{"id":7,"op":\#(body)}"#, id: 7, completions: jobs)
    }

    func bucketID(_ reply: [String: Any]) throws -> Int64 {
        let bucket = try #require(reply["bucket"] as? [String: Any], "no bucket in \(reply)")
        return Int64(try #require(bucket["id"] as? Int))
    }

    func events(_ h: HubHarness, _ c: ConnectionID, _ name: String) -> [Int] {
        h.outbound.take(c).filter { $0["ev"] as? String == name }.compactMap { $0["bucket"] as? Int }
    }

    @Test func createListGetUpdateAndValidation() async throws {
        let (h, alice, _, _) = try await people()
        for bad in [
            #""bucket.create","name":"  ""#, #""bucket.create","name":"\#(String(repeating: "é", count: 51))""#,
            #""bucket.create","name":"Trips","privacy":"public""#, #""bucket.get","bucket":0"#,
            #""bucket.update","bucket":1"#, #""bucket.share","bucket":1,"user":2,"role":"admin""#,
        ] {
            #expect(errorCode(try await op(h, 1, bad, jobs: 0)) == "bad_request", "\(bad)")
        }
        let created = try await op(h, 1, #""bucket.create","name":" Trips ""#)
        let id = try bucketID(created)
        let bucket = try #require(created["bucket"] as? [String: Any])
        #expect(bucket["name"] as? String == "Trips")
        #expect(bucket["privacy"] as? String == "private")
        #expect(bucket["role"] as? String == "owner")
        #expect(bucket["owners"] as? [Int] == [Int(alice)])
        let list = try await op(h, 1, #""bucket.list""#)
        #expect((list["buckets"] as? [[String: Any]])?.map { $0["id"] as? Int } == [Int(id)])
        let got = try await op(h, 1, #""bucket.get","bucket":\#(id)"#)
        #expect(try bucketID(got) == id)
        #expect((got["items"] as? [Any])?.isEmpty == true)
        #expect(errorCode(try await op(h, 1, #""bucket.get","bucket":999"#)) == "not_found")
        let renamed = try await op(h, 1, #""bucket.update","bucket":\#(id),"name":"Hikes","privacy":"friends""#)
        let after = try #require(renamed["bucket"] as? [String: Any])
        #expect(after["name"] as? String == "Hikes")
        #expect(after["privacy"] as? String == "friends")
        #expect(h.buckets.state.withLock { $0.buckets[id]?.name } == "Hikes")
    }

    @Test func sharingIsForFriendsAndStrangersNeverSeeOrHear() async throws {
        let (h, alice, bob, mallory) = try await people()
        let id = try bucketID(try await op(h, 1, #""bucket.create","name":"Trips""#))
        _ = h.outbound.take(1)
        let refused = try await op(h, 1, #""bucket.share","bucket":\#(id),"user":\#(mallory),"role":"viewer""#, jobs: 0)
        #expect(errorCode(refused) == "not_friends")
        #expect(errorCode(try await op(h, 2, #""bucket.get","bucket":\#(id)"#)) == "not_found")
        let shared = try await op(h, 1, #""bucket.share","bucket":\#(id),"user":\#(bob),"role":"viewer""#)
        #expect((shared["bucket"] as? [String: Any])?["viewers"] as? [Int] == [Int(bob)])
        #expect(events(h, 2, "bucket.changed") == [Int(id)])
        #expect(events(h, 3, "bucket.changed") == [Int(id)])  // every connection of the viewer
        let list = try await op(h, 2, #""bucket.list""#)
        #expect((list["buckets"] as? [[String: Any]])?.first?["role"] as? String == "viewer")
        // A viewer cannot share, rename or delete; a stranger cannot even see it.
        #expect(
            errorCode(try await op(h, 2, #""bucket.share","bucket":\#(id),"user":\#(alice),"role":"owner""#))
                == "not_owner")
        #expect(errorCode(try await op(h, 2, #""bucket.update","bucket":\#(id),"name":"Mine""#)) == "not_owner")
        #expect(errorCode(try await op(h, 2, #""bucket.delete","bucket":\#(id)"#)) == "not_owner")
        #expect(errorCode(try await op(h, 4, #""bucket.get","bucket":\#(id)"#)) == "not_found")
        #expect(errorCode(try await op(h, 4, #""item.create","bucket":\#(id),"name":"x""#)) == "not_found")
        _ = try await op(h, 1, #""item.create","bucket":\#(id),"name":"Tent""#, jobs: 2)
        #expect(events(h, 2, "bucket.changed") == [Int(id)])
        #expect(h.outbound.take(4).allSatisfy { ($0["ev"] as? String)?.hasPrefix("bucket.") != true })
        // Unsharing: Bob hears it is gone and no longer sees it.
        _ = try await op(h, 1, #""bucket.unshare","bucket":\#(id),"user":\#(bob)"#)
        #expect(events(h, 2, "bucket.removed") == [Int(id)])
        #expect(errorCode(try await op(h, 2, #""bucket.get","bucket":\#(id)"#)) == "not_found")
        // The last owner cannot leave.
        #expect(
            errorCode(try await op(h, 1, #""bucket.unshare","bucket":\#(id),"user":\#(alice)"#)) == "bad_request")
    }

    @Test func onlyOwnersAddOrDeleteItemsWithTheSeedsWordsAndViewersTickThemOff() async throws {
        let (h, alice, bob, _) = try await people()
        h.hub.mediaSigner = TestSigner()
        let id = try bucketID(try await op(h, 1, #""bucket.create","name":"Trips""#))
        _ = try await op(h, 1, #""bucket.share","bucket":\#(id),"user":\#(bob),"role":"viewer""#)
        let denied = try await op(h, 2, #""item.create","bucket":\#(id),"name":"Kayak""#)
        #expect(errorCode(denied) == "not_owner")
        #expect(
            (denied["error"] as? [String: Any])?["message"] as? String
                == "You are not an owner of this bucket so therefore you cannot add an item.")
        for bad in [
            #""item.create","bucket":\#(id),"name":"""#,
            #""item.create","bucket":\#(id),"name":"x","note":"\#(String(repeating: "n", count: 2001))""#,
            #""item.create","bucket":\#(id),"name":"x","photo":"../etc""#, #""item.create","bucket":-1,"name":"x""#,
        ] {
            #expect(errorCode(try await op(h, 1, bad, jobs: 0)) == "bad_request", "\(bad)")
        }
        h.buckets.addMedia("abc123", owner: bob)
        let notMine = try await op(h, 1, #""item.create","bucket":\#(id),"name":"Kayak","photo":"abc123""#)
        #expect(errorCode(notMine) == "not_found")
        let plain = try await op(h, 1, #""item.create","bucket":\#(id),"name":"Kayak","note":"red""#, jobs: 2)
        let item = try #require(plain["item"] as? [String: Any])
        #expect(item["placeholder_url"] as? String == Placeholders.item)
        #expect(item["photo_url"] == nil)
        #expect(item["note"] as? String == "red")
        #expect(item["done"] as? Bool == false)
        let itemID = try #require(item["id"] as? Int)
        h.buckets.addMedia("abc123", owner: alice)
        let photo = try await op(h, 1, #""item.update","item":\#(itemID),"photo":"abc123""#, jobs: 2)
        let withPhoto = try #require(photo["item"] as? [String: Any])
        #expect((withPhoto["photo_url"] as? String)?.hasPrefix("/v1/media/abc123?") == true)
        #expect(withPhoto["placeholder_url"] == nil)
        _ = h.outbound.take(2)
        // Bob ticks it off, and may do nothing else to it.
        let ticked = try await op(h, 2, #""item.update","item":\#(itemID),"done":true"#, jobs: 2)
        #expect((ticked["item"] as? [String: Any])?["done"] as? Bool == true)
        #expect(events(h, 1, "bucket.changed") == [Int(id)])
        #expect(errorCode(try await op(h, 2, #""item.update","item":\#(itemID),"name":"Canoe""#)) == "not_owner")
        let cannot = try await op(h, 2, #""item.delete","item":\#(itemID)"#)
        #expect(errorCode(cannot) == "not_owner")
        #expect(
            (cannot["error"] as? [String: Any])?["message"] as? String
                == "You are not an owner of this bucket so therefore you cannot delete the item.")
        #expect(errorCode(try await op(h, 4, #""item.update","item":\#(itemID),"done":false"#)) == "not_found")
        #expect(errorCode(try await op(h, 1, #""item.update","item":\#(itemID)"#, jobs: 0)) == "bad_request")
        let deleted = try await op(h, 1, #""item.delete","item":\#(itemID)"#, jobs: 2)
        #expect(deleted["item"] as? Int == itemID)
        #expect(h.buckets.state.withLock { $0.items.isEmpty })
        let gone = try await op(h, 1, #""bucket.delete","bucket":\#(id)"#)
        #expect(gone["bucket"] as? Int == Int(id))
        #expect(events(h, 2, "bucket.removed") == [Int(id)])
    }

    @Test func friendsPrivacyAndTheEndOfAFriendshipTakeAccessBack() async throws {
        let (h, _, bob, _) = try await people()
        let open = try bucketID(try await op(h, 1, #""bucket.create","name":"Open","privacy":"friends""#))
        #expect(events(h, 2, "bucket.changed") == [Int(open)])  // a friend of the owner can view it
        #expect(h.outbound.take(4).isEmpty)
        let shared = try bucketID(try await op(h, 1, #""bucket.create","name":"Shared""#))
        _ = try await op(h, 1, #""bucket.share","bucket":\#(shared),"user":\#(bob),"role":"viewer""#)
        let list = try await op(h, 2, #""bucket.list""#)
        #expect((list["buckets"] as? [[String: Any]])?.count == 2)
        _ = h.outbound.take(2)
        // Narrowing the privacy takes the open bucket from Bob.
        _ = try await op(h, 1, #""bucket.update","bucket":\#(open),"privacy":"private""#)
        #expect(events(h, 2, "bucket.removed") == [Int(open)])
        _ = try await op(h, 1, #""bucket.update","bucket":\#(open),"privacy":"friends""#)
        _ = h.outbound.take(2)
        // Ending the friendship takes both.
        _ = try await op(h, 1, #""friend.remove","user":\#(bob)"#, jobs: 2)
        #expect(Set(events(h, 2, "bucket.removed")) == [Int(open), Int(shared)])
        #expect(errorCode(try await op(h, 2, #""bucket.get","bucket":\#(shared)"#)) == "not_found")
        #expect(errorCode(try await op(h, 2, #""bucket.get","bucket":\#(open)"#)) == "not_found")
        #expect((try await op(h, 2, #""bucket.list""#)["buckets"] as? [Any])?.isEmpty == true)
        #expect(h.buckets.state.withLock { $0.buckets[shared]?.members[bob] } == nil)
    }

    @Test func aFailedCommitChangesNothingAndPushesNothing() async throws {
        let (h, _, bob, _) = try await people()
        let id = try bucketID(try await op(h, 1, #""bucket.create","name":"Trips""#))
        _ = h.outbound.take(1)
        h.buckets.state.withLock { $0.failWrites = true }
        let failed = try await op(h, 1, #""bucket.share","bucket":\#(id),"user":\#(bob),"role":"owner""#)
        #expect(errorCode(failed) == "internal")
        #expect(h.outbound.take(2).isEmpty)
        #expect(h.buckets.state.withLock { $0.buckets[id]?.members[bob] } == nil)
    }
}
