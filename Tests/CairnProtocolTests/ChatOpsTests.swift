import CairnCore
import CairnHubTestSupport
import CairnLoop
import CairnProtocol
import Synchronization
import Testing

// Chat through the hub: friends only, validation, the push to every connection of the recipient and to the
// sender's other connections, history pages (newest page first, each oldest-first, with `more`), conversation
// listing with unread counts, and read marks synchronised across the reader's connections.

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct HubChatTests {
    /// Alice on connection 1, Bob on 2 (and 3, a second device), friends; Mallory on 4, a stranger.
    func people() async throws -> (HubHarness, Int64, Int64, Int64) {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        try await h.befriend(1, alice, 2, bob)
        let mallory = try await h.user(4, "mallory")
        return (h, alice, bob, mallory)
    }

    func send(
        _ h: HubHarness, from connection: ConnectionID, to user: Int64, _ text: String,
        stored: Bool = true
    ) async throws -> [String: Any] {
        try await h.request(
            connection, #"{"id":20,"op":"chat.send","to":\#(user),"text":"\#(text)"}"#, id: 20,
            completions: stored ? 1 : 0)
    }

    @Test func onlyFriendsCanMessageAndTextIsChecked() async throws {
        let (h, alice, bob, mallory) = try await people()
        #expect(errorCode(try await send(h, from: 4, to: alice, "hi", stored: false)) == "not_friends")
        #expect(errorCode(try await send(h, from: 1, to: mallory, "hi", stored: false)) == "not_friends")
        #expect(errorCode(try await send(h, from: 1, to: alice, "hi", stored: false)) == "bad_request")
        #expect(errorCode(try await send(h, from: 1, to: bob, "   ", stored: false)) == "bad_request")
        #expect(
            errorCode(try await send(h, from: 1, to: bob, String(repeating: "y", count: 4001), stored: false))
                == "bad_request")
        // 2,001 characters, 4,002 bytes: over the 4,000-byte limit.
        #expect(
            errorCode(try await send(h, from: 1, to: bob, String(repeating: "é", count: 2001), stored: false))
                == "bad_request")
        #expect(h.content.state.withLock { $0.messages.isEmpty })
    }

    @Test func aMessageIsCommittedRepliedAndPushedToEveryDevice() async throws {
        let (h, alice, bob, _) = try await people()
        // Bob's second device and Alice's second device.
        h.router.connectionOpened(3, token: nil)
        let login = try await h.request(
            3, #"{"id":1,"op":"login","username":"bob","password":"password1"}"#, completions: 1)
        #expect(login["ok"] as? Bool == true)
        h.router.connectionOpened(6, token: nil)
        _ = try await h.request(6, #"{"id":1,"op":"login","username":"alice","password":"password1"}"#, completions: 1)
        let reply = try await send(h, from: 1, to: bob, "hello bob")
        let message = try #require(reply["message"] as? [String: Any])
        #expect(message["from"] as? Int == Int(alice))
        #expect(message["to"] as? Int == Int(bob))
        #expect(message["text"] as? String == "hello bob")
        #expect(message["ts"] as? Int == Int(h.clock.now()))
        for device: ConnectionID in [2, 3, 6] {
            let pushed = h.outbound.take(device).first { $0["ev"] as? String == "chat.msg" }
            #expect((pushed?["message"] as? [String: Any])?["id"] as? Int == message["id"] as? Int, "device \(device)")
        }
        #expect(
            !h.outbound.take(1).contains { $0["ev"] as? String == "chat.msg" }, "the sending connection has the reply")
        #expect(h.content.state.withLock { $0.messages.count } == 1)
    }

    @Test func historyPagesBackwards() async throws {
        let (h, _, bob, _) = try await people()
        var ids: [Int] = []
        for n in 1...5 {
            let reply = try await send(h, from: n % 2 == 0 ? 2 : 1, to: n % 2 == 0 ? 1 : bob, "m\(n)")
            ids.append(try #require((reply["message"] as? [String: Any])?["id"] as? Int))
        }
        let first = try await h.request(
            1, #"{"id":21,"op":"chat.history","with":\#(bob),"limit":2}"#, id: 21, completions: 1)
        let page1 = try #require(first["messages"] as? [[String: Any]])
        #expect(page1.map { $0["text"] as? String } == ["m4", "m5"])
        #expect(first["more"] as? Bool == true)
        let second = try await h.request(
            1, #"{"id":22,"op":"chat.history","with":\#(bob),"limit":2,"before":\#(ids[3])}"#,
            id: 22, completions: 1)
        #expect((second["messages"] as? [[String: Any]])?.map { $0["text"] as? String } == ["m2", "m3"])
        let last = try await h.request(
            1, #"{"id":23,"op":"chat.history","with":\#(bob),"limit":2,"before":\#(ids[1])}"#,
            id: 23, completions: 1)
        #expect((last["messages"] as? [[String: Any]])?.map { $0["text"] as? String } == ["m1"])
        #expect(last["more"] as? Bool == false)
        let tooMany = try await h.request(1, #"{"id":24,"op":"chat.history","with":\#(bob),"limit":101}"#, id: 24)
        #expect(errorCode(tooMany) == "bad_request")
    }

    @Test func conversationsCountUnreadUntilMarkedRead() async throws {
        let (h, alice, bob, _) = try await people()
        _ = try await send(h, from: 1, to: bob, "one")
        _ = try await send(h, from: 1, to: bob, "two")
        let reply = try await send(h, from: 2, to: alice, "back")
        let backID = try #require((reply["message"] as? [String: Any])?["id"] as? Int)
        let list = try await h.request(2, #"{"id":25,"op":"chat.list"}"#, id: 25, completions: 1)
        let conversations = try #require(list["conversations"] as? [[String: Any]])
        #expect(conversations.count == 1)
        #expect(conversations[0]["with"] as? Int == Int(alice))
        #expect(conversations[0]["unread"] as? Int == 2)
        #expect((conversations[0]["last"] as? [String: Any])?["text"] as? String == "back")
        #expect((conversations[0]["user"] as? [String: Any])?["username"] as? String == "alice")
        let aliceList = try await h.request(1, #"{"id":26,"op":"chat.list"}"#, id: 26, completions: 1)
        #expect(((aliceList["conversations"] as? [[String: Any]])?.first?["unread"] as? Int) == 1)
        let read = try await h.request(
            1, #"{"id":27,"op":"chat.read","with":\#(bob),"upto":\#(backID)}"#, id: 27, completions: 1)
        #expect(read["unread"] as? Int == 0)
        let after = try await h.request(1, #"{"id":28,"op":"chat.list"}"#, id: 28, completions: 1)
        #expect(((after["conversations"] as? [[String: Any]])?.first?["unread"] as? Int) == 0)
        // Marks never move backwards.
        let back = try await h.request(
            1, #"{"id":29,"op":"chat.read","with":\#(bob),"upto":1}"#, id: 29, completions: 1)
        #expect(back["unread"] as? Int == 0)
    }

    @Test func readingAheadCannotSilenceFutureMessagesAndStrangersAreNotFound() async throws {
        let (h, alice, bob, mallory) = try await people()
        _ = try await send(h, from: 2, to: alice, "one")
        let read = try await h.request(
            1, #"{"id":30,"op":"chat.read","with":\#(bob),"upto":9007199254740991}"#, id: 30, completions: 1)
        #expect(read["unread"] as? Int == 0)
        #expect(read["upto"] as? Int == 1)
        _ = try await send(h, from: 2, to: alice, "two")
        let list = try await h.request(1, #"{"id":31,"op":"chat.list"}"#, id: 31, completions: 1)
        #expect(((list["conversations"] as? [[String: Any]])?.first?["unread"] as? Int) == 1)
        let stranger = try await h.request(
            1, #"{"id":32,"op":"chat.read","with":\#(mallory),"upto":1}"#, id: 32, completions: 1)
        #expect(errorCode(stranger) == "not_found")
    }

    @Test func aFailedWriteIsReportedAndNothingIsPushed() async throws {
        let (h, _, bob, _) = try await people()
        h.content.state.withLock { $0.failWrites = true }
        #expect(errorCode(try await send(h, from: 1, to: bob, "lost")) == "internal")
        #expect(!h.outbound.take(2).contains { $0["ev"] as? String == "chat.msg" })
    }
}
