// User-addressed news across nodes in the protocol layer, with the Redis glue replaced by the test: a chat message
// or a bucket change for a user connected elsewhere is handed on once, encoded as local connections get it, listing
// only the users online elsewhere, under the tag that says what it is; events that cross nodes another way (friend
// events, presence) are not handed on; news from another node reaches every connection of each listed user here,
// bucket news also tells the hub whose followed items to read again, and bytes that are not one event of the tag's
// kinds are refused.
import CairnDomainTestSupport
import CairnLoop
import Foundation
import Testing

@testable import CairnDomain
@testable import CairnProtocol

@MainActor
struct ClusterNewsTests {
    typealias Sent = (tag: ClusterNews.Tag, users: [Int64], event: [String: Any])

    /// Alice on connection 1, Bob on 2, friends; `elsewhere` are online on another node; what is handed on is kept.
    static func scene(elsewhere: Set<Int64>) async throws -> (HubHarness, ClusterNews, Int64, Int64, () -> [Sent]) {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        try await h.befriend(1, alice, 2, bob)
        var sent: [Sent] = []
        let news = h.router.attachClusterNews(online: { elsewhere.contains($0) })
        news.send = { tag, users, payload in
            let event = try! JSONSerialization.jsonObject(with: Data(payload)) as! [String: Any]
            sent.append((tag, users, event))
        }
        return (
            h, news, alice, bob,
            {
                defer { sent = [] }
                return sent
            }
        )
    }

    @Test func chatAndBucketNewsForUsersElsewhereIsHandedOnOnce() async throws {
        let (h, _, alice, bob, taken) = try await Self.scene(elsewhere: [2, 99])
        #expect(bob == 2)
        let reply = try await h.request(1, #"{"id":5,"op":"chat.send","to":2,"text":"hi"}"#, id: 5, completions: 1)
        let id = try #require((reply["message"] as? [String: Any])?["id"] as? Int)
        var sent = taken()
        #expect(sent.count == 1)
        #expect(sent.first?.tag == .event && sent.first?.users == [bob])
        #expect(sent.first?.event["ev"] as? String == "chat.msg")
        #expect((sent.first?.event["message"] as? [String: Any])?["id"] as? Int == id)
        #expect(h.outbound.take(2).contains { $0["ev"] as? String == "chat.msg" }, "bob's connection here too")

        let created = try await h.request(
            1, #"{"id":6,"op":"bucket.create","name":"Gear"}"#, id: 6, completions: 1)
        let bucket = try #require((created["bucket"] as? [String: Any])?["id"] as? Int)
        _ = try await h.request(
            1, #"{"id":7,"op":"bucket.share","bucket":\#(bucket),"user":2,"role":"viewer"}"#, id: 7, completions: 1)
        sent = taken()
        #expect(sent.count == 1, "\(sent)")
        #expect(sent.first?.tag == .bucket && sent.first?.users == [bob])
        #expect(sent.first?.event["ev"] as? String == "bucket.changed")
        #expect(sent.first?.event["bucket"] as? Int == bucket)

        // Friend events cross nodes with the control channel's change, presence with the mirror: not handed on.
        try await h.send(1, #"{"id":8,"op":"friend.remove","user":2}"#, completions: 1)
        #expect(!taken().contains { ($0.event["ev"] as? String)?.hasPrefix("friend.") == true })
        #expect(alice == 1)
    }

    @Test func nobodyElsewhereNothingHandedOn() async throws {
        let (h, _, _, _, taken) = try await Self.scene(elsewhere: [])
        _ = try await h.request(1, #"{"id":5,"op":"chat.send","to":2,"text":"hi"}"#, id: 5, completions: 1)
        #expect(taken().isEmpty)
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func newsFromAnotherNodeReachesEveryConnectionOfListedUsersHere() async throws {
        let (h, news, _, bob, _) = try await Self.scene(elsewhere: [])
        h.router.connectionOpened(3, token: nil)
        _ = try await h.request(3, #"{"id":1,"op":"login","username":"bob","password":"password1"}"#, completions: 1)
        var heard: [[Int64]] = []
        news.bucketNews = { heard.append($0) }
        let chat = Self.bytes(#"{"ev":"chat.msg","message":{"id":41,"from":1,"to":2,"text":"hi","ts":5}}"#)
        news.received(tag: 0, users: [bob, 99], payload: chat)
        for connection: ConnectionID in [2, 3] {
            let got = h.outbound.take(connection)
            #expect(got.count == 1 && (got.first?["message"] as? [String: Any])?["id"] as? Int == 41)
        }
        #expect(h.outbound.take(1).isEmpty, "not listed")
        #expect(heard.isEmpty && news.deliveredCount == 1)

        news.received(tag: 1, users: [bob], payload: Self.bytes(#"{"ev":"bucket.removed","bucket":7}"#))
        #expect(h.outbound.take(2).first?["ev"] as? String == "bucket.removed")
        #expect(heard == [[bob]])
        news.received(tag: 1, users: [99], payload: Self.bytes(#"{"ev":"bucket.changed","bucket":7}"#))
        #expect(heard == [[bob]], "nobody listed is here")
    }

    @Test func bytesThatAreNotOneEventOfTheTagsKindsAreRefused() async throws {
        let (h, news, _, bob, _) = try await Self.scene(elsewhere: [])
        var heard: [[Int64]] = []
        news.bucketNews = { heard.append($0) }
        let refused: [(UInt8, String)] = [
            (0, #"{"ev":"bucket.changed","bucket":7}"#),  // bucket news under the plain tag
            (1, #"{"ev":"chat.read","with":1,"upto":3,"unread":0}"#),  // the other way round
            (2, #"{"ev":"chat.read","with":1,"upto":3,"unread":0}"#),  // a tag this build does not know
            (0, #"{"ev":"pos","user":1,"lat":1,"lon":2,"ts":3}"#),  // not news: positions have channels of their own
            (0, #"{"ev":"presence","user":1,"online":true}"#),
            (0, "{\"ev\":\"chat.read\",\"with\":1}\n{\"ev\":\"chat.read\",\"with\":2}"),  // two lines
            (0, #"{"ev":"chat.read","with":1"#),  // cut short
            (0, #"{"ev":"chat.readx","with":1}"#),
        ]
        for (tag, text) in refused { news.received(tag: tag, users: [bob], payload: Self.bytes(text)) }
        #expect(news.refusedCount == UInt64(refused.count))
        #expect(news.deliveredCount == 0)
        #expect(h.outbound.take(2).isEmpty && heard.isEmpty)
    }
}
