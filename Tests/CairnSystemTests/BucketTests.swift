// Buckets over real sockets: a bucket created, shared with a friend, who hears `bucket.changed` when it is shared and
// when an item is added, and reads it back with the item's placeholder; a stranger is refused the share and hears
// nothing.
import CairnMedia
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct BucketTests {
        @Test func createShareAndPushReachTheFriendAndNotTheStranger() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let bob = try hub.member("bob")
            let mallory = try hub.member("mallory")
            try hub.befriend(alice, bob)
            let created = try alice.0.requestOK("bucket.create", ["name": "Summer", "privacy": "private"])
            let id = try #require((created["bucket"] as? [String: Any])?["id"] as? Int)
            #expect(
                errorCode(try alice.0.request("bucket.share", ["bucket": id, "user": mallory.1, "role": "viewer"]))
                    == "not_friends")
            _ = try alice.0.requestOK("bucket.share", ["bucket": id, "user": bob.1, "role": "viewer"])
            #expect(try bob.0.nextEvent("bucket.changed")["bucket"] as? Int == id)
            _ = try alice.0.requestOK("item.create", ["bucket": id, "name": "Swim in the lake"])
            #expect(try bob.0.nextEvent("bucket.changed")["bucket"] as? Int == id)
            let got = try bob.0.requestOK("bucket.get", ["bucket": id])
            let items = try #require(got["items"] as? [[String: Any]])
            #expect(items.map { $0["name"] as? String } == ["Swim in the lake"])
            #expect(items.first?["placeholder_url"] as? String == Placeholders.item)
            #expect(errorCode(try mallory.0.request("bucket.get", ["bucket": id])) == "not_found")
            while let event = try mallory.0.pollObject(within: 0.3) {
                #expect((event["ev"] as? String)?.hasPrefix("bucket.") != true, "\(event)")
            }
        }
    }
}
