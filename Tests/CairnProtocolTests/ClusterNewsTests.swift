// User-addressed news across nodes in the protocol layer, with the Redis glue replaced by the test: a chat message
// or a bucket change for a user connected elsewhere is handed on once, encoded as local connections get it, listing
// only the users online elsewhere, under the tag that says what it is; events that cross nodes another way (friend
// events, presence) are not handed on; news from another node reaches every connection of each listed user here,
// bucket news also tells the hub whose followed items to read again (and, for a bucket lost, which bucket), a
// left-behind alert is not written to an owner the node judges itself, a tag this build does not know is ignored, and
// bytes that are not one event of the tag's kinds in UTF-8 are refused.
import CairnHubTestSupport
import CairnLoop
import Foundation
import Testing

@testable import CairnProtocol

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct ClusterNewsTests {
    typealias Sent = (tag: ClusterNews.Tag, subject: Int64, users: [Int64], event: [String: Any])

    /// Alice on connection 1, Bob on 2, friends; `elsewhere` are online on another node; what is handed on is kept.
    static func scene(elsewhere: Set<Int64>) async throws -> (HubHarness, ClusterNews, Int64, Int64, () -> [Sent]) {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        try await h.befriend(1, alice, 2, bob)
        var sent: [Sent] = []
        let news = h.router.attachClusterNews(online: { elsewhere.contains($0) })
        news.send = { tag, subject, users, payload in
            let event = try! JSONSerialization.jsonObject(with: Data(payload)) as! [String: Any]
            sent.append((tag, subject, users, event))
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
        #expect(sent.first?.tag == .event && sent.first?.users == [bob] && sent.first?.subject == 0)
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
        #expect(sent.first?.tag == .bucketChanged && sent.first?.users == [bob])
        #expect(sent.first?.subject == Int64(bucket))
        #expect(sent.first?.event["ev"] as? String == "bucket.changed")
        #expect(sent.first?.event["bucket"] as? Int == bucket)

        // Friend events cross nodes with the control channel's change, presence with the mirror: not handed on. The
        // end of the friendship takes bob's share with it: `bucket.removed`, with the bucket.
        try await h.send(1, #"{"id":8,"op":"friend.remove","user":2}"#, completions: 1)  // with its follow-up work
        sent = taken()
        #expect(!sent.contains { ($0.event["ev"] as? String)?.hasPrefix("friend.") == true })
        #expect(sent.map(\.tag) == [.bucketRemoved] && sent.first?.subject == Int64(bucket), "\(sent)")
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
        var changed: [[Int64]] = []
        var lost: [(Int64, [Int64])] = []
        news.bucketChanged = { changed.append($0) }
        news.bucketRemoved = { lost.append(($0, $1)) }
        let chat = Self.bytes(#"{"ev":"chat.msg","message":{"id":41,"from":1,"to":2,"text":"hi","ts":5}}"#)
        news.received(tag: 0, subject: 0, users: [bob, 99], payload: chat)
        for connection: ConnectionID in [2, 3] {
            let got = h.outbound.take(connection)
            #expect(got.count == 1 && (got.first?["message"] as? [String: Any])?["id"] as? Int == 41)
        }
        #expect(h.outbound.take(1).isEmpty, "not listed")
        #expect(changed.isEmpty && lost.isEmpty && news.deliveredCount == 1)

        news.received(tag: 2, subject: 7, users: [bob], payload: Self.bytes(#"{"ev":"bucket.removed","bucket":7}"#))
        #expect(h.outbound.take(2).first?["ev"] as? String == "bucket.removed")
        #expect(lost.map(\.0) == [7] && lost.map(\.1) == [[bob]] && changed.isEmpty)
        news.received(tag: 1, subject: 7, users: [bob], payload: Self.bytes(#"{"ev":"bucket.changed","bucket":7}"#))
        #expect(changed == [[bob]])
        news.received(tag: 1, subject: 7, users: [99], payload: Self.bytes(#"{"ev":"bucket.changed","bucket":7}"#))
        #expect(changed == [[bob]], "nobody listed is here")
    }

    @Test func aLeftBehindAlertIsNotWrittenToAnOwnerThisNodeJudgesItself() async throws {
        let (h, news, alice, bob, _) = try await Self.scene(elsewhere: [])
        news.judgesAlerts = { $0 == alice }
        let alert = Self.bytes(#"{"ev":"item.left_behind","item":3,"distance":200,"lat":1,"lon":2}"#)
        news.received(tag: 3, subject: 0, users: [alice, bob], payload: alert)
        #expect(h.outbound.take(1).isEmpty, "alice reports here: she hears this node's own verdicts")
        #expect(h.outbound.take(2).first?["ev"] as? String == "item.left_behind")
    }

    @Test func aTagThisBuildDoesNotKnowIsIgnored() async throws {
        let (h, news, _, bob, _) = try await Self.scene(elsewhere: [])
        news.received(tag: 9, subject: 0, users: [bob], payload: Self.bytes(#"{"ev":"chat.read","with":1}"#))
        #expect(news.refusedCount == 0 && news.deliveredCount == 0)
        #expect(h.outbound.take(2).isEmpty)
    }

    @Test func bytesThatAreNotOneEventOfTheTagsKindsAreRefused() async throws {
        let (h, news, _, bob, _) = try await Self.scene(elsewhere: [])
        var heard: [[Int64]] = []
        news.bucketChanged = { heard.append($0) }
        let refused: [(UInt8, [UInt8])] = [
            (0, Self.bytes(#"{"ev":"bucket.changed","bucket":7}"#)),  // bucket news under the plain tag
            (1, Self.bytes(#"{"ev":"chat.read","with":1,"upto":3,"unread":0}"#)),  // the other way round
            (2, Self.bytes(#"{"ev":"bucket.changed","bucket":7}"#)),  // changed under removed
            (0, Self.bytes(#"{"ev":"item.reunited","item":3}"#)),  // an owner's alert under the plain tag
            (0, Self.bytes(#"{"ev":"pos","user":1,"lat":1,"lon":2,"ts":3}"#)),  // positions have channels of their own
            (0, Self.bytes(#"{"ev":"presence","user":1,"online":true}"#)),
            (0, Self.bytes("{\"ev\":\"chat.read\",\"with\":1}\n{\"ev\":\"chat.read\",\"with\":2}")),  // two lines
            (0, Self.bytes(#"{"ev":"chat.read","with":1"#)),  // cut short
            (0, Self.bytes(#"{"ev":"chat.readx","with":1}"#)),
            (0, Self.bytes(#"{"ev":"chat.read","with":""#) + [0xC3, 0x28] + Self.bytes(#""}"#)),  // not UTF-8
        ]
        for (tag, payload) in refused { news.received(tag: tag, subject: 0, users: [bob], payload: payload) }
        #expect(news.refusedCount == UInt64(refused.count))
        #expect(news.deliveredCount == 0)
        #expect(h.outbound.take(2).isEmpty && heard.isEmpty)
    }
}
