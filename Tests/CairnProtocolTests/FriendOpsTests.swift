import CairnHub
import CairnHubTestSupport
import CairnLoop
import CairnProtocol
import Synchronization
import Testing

@testable import CairnSocial

// Friend ops through the hub: requests, pushes to the other side, idempotence, mutual requests, refusals.

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct HubFriendsTests {
    @Test func requestAndAcceptMakeFriendsAndPushBothWays() async throws {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        let sent = try await h.request(1, #"{"id":2,"op":"friend.request","user":\#(bob)}"#, id: 2, completions: 1)
        #expect(sent["status"] as? String == "pending")
        let pushed = try #require(h.outbound.take(2).first { $0["ev"] as? String == "friend.request" })
        #expect((pushed["user"] as? [String: Any])?["username"] as? String == "alice")
        let accepted = try await h.request(2, #"{"id":3,"op":"friend.accept","user":\#(alice)}"#, id: 3, completions: 1)
        #expect(accepted["status"] as? String == "friends")
        #expect((accepted["friend"] as? [String: Any])?["online"] as? Bool == true)
        #expect(h.outbound.take(1).contains { $0["ev"] as? String == "friend.accepted" })
        #expect(h.hub.social.graph.areFriends(alice, bob))
        #expect(h.store.state.withLock { $0.friendships.contains([min(alice, bob), max(alice, bob)]) })
    }

    @Test func repeatedRequestIsIdempotentAndMutualRequestMakesFriends() async throws {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        _ = try await h.request(1, #"{"id":2,"op":"friend.request","user":\#(bob)}"#, id: 2, completions: 1)
        let again = try await h.request(1, #"{"id":3,"op":"friend.request","user":\#(bob)}"#, id: 3)
        #expect(again["status"] as? String == "pending")
        #expect(h.outbound.take(2).filter { $0["ev"] as? String == "friend.request" }.count == 1)
        let back = try await h.request(2, #"{"id":4,"op":"friend.request","user":\#(alice)}"#, id: 4, completions: 1)
        #expect(back["status"] as? String == "friends")
        #expect(h.hub.social.graph.areFriends(alice, bob))
    }

    @Test func requestsThatCrossInFlightMakeFriends() async throws {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        // Both ask before either request has been committed.
        try await h.send(1, #"{"id":2,"op":"friend.request","user":\#(bob)}"#)
        try await h.send(2, #"{"id":2,"op":"friend.request","user":\#(alice)}"#)
        try await h.scheduler.run(atLeast: 2)
        try await h.scheduler.run()  // the friendship commit
        #expect(h.hub.social.graph.areFriends(alice, bob))
        #expect(h.store.state.withLock { $0.friendships.contains([min(alice, bob), max(alice, bob)]) })
        #expect(h.outbound.take(1).contains { $0["ev"] as? String == "friend.accepted" })
        #expect(h.outbound.take(2).contains { $0["ev"] as? String == "friend.accepted" })
    }

    @Test func aRequestWithdrawnBeforeTheAcceptCommitsCannotBeAccepted() async throws {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        _ = try await h.request(1, #"{"id":2,"op":"friend.request","user":\#(bob)}"#, id: 2, completions: 1)
        _ = h.outbound.take(2)
        // Alice's withdrawal has committed but its completion has not reached the loop yet, so the graph still
        // holds the request when bob accepts: the accept's own transaction must find it gone.
        try await h.store.deleteFriendRequest(from: alice, to: bob)
        let accepted = try await h.request(2, #"{"id":3,"op":"friend.accept","user":\#(alice)}"#, id: 3, completions: 1)
        #expect(errorCode(accepted) == "not_found")
        #expect((accepted["error"] as? [String: Any])?["message"] as? String == "no friend request from user \(alice)")
        #expect(!h.hub.social.graph.areFriends(alice, bob))
        #expect(h.store.state.withLock { $0.friendships.isEmpty })
        #expect(!h.outbound.take(1).contains { $0["ev"] as? String == "friend.accepted" })
    }

    @Test func requestingYourselfAGuestOrNobodyIsRefused() async throws {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        let me = try await h.request(1, #"{"id":2,"op":"friend.request","user":\#(alice)}"#, id: 2)
        #expect(errorCode(me) == "bad_request")
        h.router.connectionOpened(5, token: nil)
        try await h.send(5, #"{"id":1,"op":"guest"}"#, completions: 1)
        let guestID = try #require((h.outbound.take(5).first?["user"] as? [String: Any])?["id"] as? Int)
        let toGuest = try await h.request(
            1, #"{"id":3,"op":"friend.request","user":\#(guestID)}"#, id: 3, completions: 1)
        #expect(errorCode(toGuest) == "forbidden")
        let fromGuest = try await h.request(5, #"{"id":2,"op":"friend.request","user":\#(alice)}"#, id: 2)
        #expect(errorCode(fromGuest) == "forbidden")
        let nobody = try await h.request(1, #"{"id":4,"op":"friend.request","user":9999}"#, id: 4, completions: 1)
        #expect(errorCode(nobody) == "not_found")
        let badType = try await h.request(1, #"{"id":5,"op":"friend.request","user":"bob"}"#, id: 5)
        #expect(errorCode(badType) == "bad_request")
    }

    @Test func acceptCompletesInMemoryEvenIfTheConnectionClosedMeanwhile() async throws {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        _ = try await h.request(1, #"{"id":2,"op":"friend.request","user":\#(bob)}"#, id: 2, completions: 1)
        try await h.send(2, #"{"id":3,"op":"friend.accept","user":\#(alice)}"#)
        h.router.connectionClosed(2)  // the app closes right after sending
        try await h.scheduler.run()
        #expect(h.hub.social.graph.areFriends(alice, bob))  // as the store says
        #expect(h.outbound.take(1).contains { $0["ev"] as? String == "friend.accepted" })
    }

    @Test func acceptOrDeclineWithoutRequestIsNotFound() async throws {
        let h = HubHarness()
        _ = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        #expect(
            errorCode(try await h.request(1, #"{"id":2,"op":"friend.accept","user":\#(bob)}"#, id: 2)) == "not_found")
        #expect(
            errorCode(try await h.request(1, #"{"id":3,"op":"friend.decline","user":\#(bob)}"#, id: 3)) == "not_found")
    }

    @Test func declineDropsTheRequest() async throws {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        _ = try await h.request(1, #"{"id":2,"op":"friend.request","user":\#(bob)}"#, id: 2, completions: 1)
        let declined = try await h.request(
            2, #"{"id":3,"op":"friend.decline","user":\#(alice)}"#, id: 3, completions: 1)
        #expect(declined["ok"] as? Bool == true)
        #expect(!h.hub.social.graph.hasRequest(from: alice, to: bob))
        #expect(h.store.state.withLock { $0.requests.isEmpty })
    }

    @Test func removeEndsFriendshipPushesAndRefusesStrangers() async throws {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        try await h.befriend(1, alice, 2, bob)
        let removed = try await h.request(1, #"{"id":2,"op":"friend.remove","user":\#(bob)}"#, id: 2, completions: 1)
        #expect(removed["status"] as? String == "removed")
        #expect(h.outbound.take(2).contains { $0["ev"] as? String == "friend.removed" })
        #expect(!h.hub.social.graph.areFriends(alice, bob))
        let again = try await h.request(1, #"{"id":3,"op":"friend.remove","user":\#(bob)}"#, id: 3)
        #expect(errorCode(again) == "not_friends")
    }

    @Test func failedRemovalCommitRestoresTheFriendship() async throws {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        try await h.befriend(1, alice, 2, bob)
        h.store.state.withLock { $0.failWrites = true }
        let reply = try await h.request(1, #"{"id":2,"op":"friend.remove","user":\#(bob)}"#, id: 2, completions: 1)
        #expect(errorCode(reply) == "internal")
        #expect(h.hub.social.graph.areFriends(alice, bob))
    }

    @Test func listAndRequestsShowUsersWithOnlineState() async throws {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        let carol = try await h.user(3, "carol")
        try await h.befriend(1, alice, 2, bob)
        _ = try await h.request(3, #"{"id":2,"op":"friend.request","user":\#(alice)}"#, id: 2, completions: 1)
        h.router.connectionClosed(2)
        let list = try await h.request(1, #"{"id":5,"op":"friend.list"}"#, id: 5, completions: 1)
        let friends = try #require(list["friends"] as? [[String: Any]])
        #expect(friends.count == 1)
        #expect(friends[0]["id"] as? Int == Int(bob))
        #expect(friends[0]["online"] as? Bool == false)
        let requests = try await h.request(1, #"{"id":6,"op":"friend.requests"}"#, id: 6, completions: 1)
        #expect((requests["incoming"] as? [[String: Any]])?.map { $0["id"] as? Int } == [Int(carol)])
        #expect((requests["outgoing"] as? [[String: Any]])?.isEmpty == true)
    }

    @Test func searchFindsByPrefixExcludingSelfAndGuests() async throws {
        let h = HubHarness()
        _ = try await h.user(1, "anna")
        _ = try await h.user(2, "annabel")
        _ = try await h.user(3, "bob")
        let found = try await h.request(1, #"{"id":2,"op":"user.search","q":"ANN"}"#, id: 2, completions: 1)
        #expect((found["users"] as? [[String: Any]])?.map { $0["username"] as? String } == ["annabel"])
        #expect(errorCode(try await h.request(1, #"{"id":3,"op":"user.search","q":"  "}"#, id: 3)) == "bad_request")
        // U+0000 (only `\u0000` can carry it) is refused by the wire, naming the field, before any store is asked.
        let nul = try await h.request(1, #"{"id":4,"op":"user.search","q":"a\u0000"}"#, id: 4)
        #expect(errorCode(nul) == "bad_request")
        #expect(((nul["error"] as? [String: Any])?["message"] as? String)?.contains("field 'q'") == true)
    }
}
