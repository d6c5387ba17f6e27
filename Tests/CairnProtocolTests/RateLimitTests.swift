import CairnCore
import CairnHubTestSupport
import CairnLoop
import CairnProtocol
import CairnWire
import Synchronization
import Testing

// Floods a connection or an account can cause, bounded: requests per connection per second (answered
// `rate_limited` with `retry_after_ms`, then closed with 4429 if it keeps on) and new friend requests per hour.

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct RateLimitTests {
    @Test func requestsOverTheRateAreRefusedThenTheConnectionIsClosed() async throws {
        let h = HubHarness {
            $0.messagesPerSecond = 10
            $0.messageBurst = 5
        }
        h.router.connectionOpened(1, token: nil)
        // Five in a burst are handled (whoami before auth: unauthorized), the sixth is refused with a wait.
        let burst = (1...6).map { #"{"id":\#($0),"op":"whoami"}"# }.joined(separator: "\n")
        try await h.send(1, burst)
        let replies = h.outbound.take(1)
        #expect(replies.count == 6)
        #expect(replies.prefix(5).allSatisfy { errorCode($0) == "unauthorized" })
        #expect(errorCode(replies[5]) == "rate_limited" && replies[5]["id"] as? Int == 6)
        let wait = try #require((replies[5]["error"] as? [String: Any])?["retry_after_ms"] as? Int)
        #expect(wait > 0 && wait <= 100)
        // A second later the bucket has refilled: handled again.
        h.clock.advance(by: 1000)
        try await h.send(1, #"{"id":7,"op":"whoami"}"#)
        #expect(errorCode(try #require(h.outbound.take(1).first)) == "unauthorized")
        #expect(h.outbound.closes[1] == nil)
        // Going on while refused: closed with 4429 after another burst's worth of refusals, and nothing more read.
        let flood = (8...30).map { #"{"id":\#($0),"op":"whoami"}"# }.joined(separator: "\n")
        try await h.send(1, flood)
        #expect(h.outbound.closes[1]?.code == .tooManyRequests)
        let answered = h.outbound.take(1)
        #expect(answered.count < 23)
        try await h.send(1, #"{"id":99,"op":"whoami"}"#)
        #expect(h.outbound.take(1).isEmpty)
    }

    @Test func newFriendRequestsPerHourAreBounded() async throws {
        let h = HubHarness { $0.friendRequestsPerHour = 2 }
        _ = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        let carol = try await h.user(3, "carol")
        let dave = try await h.user(4, "dave")
        for (n, target) in [bob, carol].enumerated() {
            let sent = try await h.request(
                1, #"{"id":\#(n + 10),"op":"friend.request","user":\#(target)}"#,
                id: n + 10, completions: 1)
            #expect(sent["status"] as? String == "pending")
        }
        // Asking bob again is not a new request and is not counted.
        let again = try await h.request(1, #"{"id":20,"op":"friend.request","user":\#(bob)}"#, id: 20)
        #expect(again["status"] as? String == "pending")
        let third = try await h.request(1, #"{"id":21,"op":"friend.request","user":\#(dave)}"#, id: 21)
        #expect(errorCode(third) == "rate_limited")
        #expect(h.store.state.withLock { !$0.requests.contains([1, dave]) })
        h.clock.advance(by: 3_600_001)
        let later = try await h.request(1, #"{"id":22,"op":"friend.request","user":\#(dave)}"#, id: 22, completions: 1)
        #expect(later["status"] as? String == "pending")
    }
}
