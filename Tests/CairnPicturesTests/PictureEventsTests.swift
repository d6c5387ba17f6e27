import CairnErrorCodes
import CairnHub
import CairnHubTestSupport
import CairnLoop
import Testing

// Guessing a private event's password: spread over many connections of one account the guesses still meet the limit
// per user and event, and spread over many accounts they meet the event's back-off; both are answered `rate_limited`
// with `retry_after_ms`, count nothing while refused, and a right password (after the wait) still joins. Members and
// public events cost no guess.
@testable import CairnCore
@testable import CairnPictures

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct PictureEventsTests {
    /// An owner (user 1) with a private event `#vault` (password "right"), and users 2...`users`.
    func scene(users: Int) async throws -> DomainHarness {
        let h = DomainHarness()
        try await h.makeUsers(users)
        let owner = h.connect(ConnectionID(1), as: 1)
        _ = try await outcome(h) { h.hub.pictureEvents.create(owner, tag: "vault", title: nil, password: "right", $0) }
            .get()
        return h
    }

    func join(_ h: DomainHarness, _ caller: Caller, _ password: String?, tag: String = "vault") async throws
        -> Result<EventInfo, DomainError>
    {
        try await outcome(h) { h.hub.pictureEvents.join(caller, tag: tag, password: password, $0) }
    }

    func retryAfter(_ result: Result<EventInfo, DomainError>) -> Int64? {
        guard case .failure(let error) = result, error.code == .rateLimited else { return nil }
        return error.details.first { $0.name == "retry_after_ms" }?.value
    }

    @Test func oneAccountOnManyConnectionsMeetsTheLimitPerUserAndEvent() async throws {
        let h = try await scene(users: 2)
        let limit = HubConfiguration().eventPasswordFailures
        // A fresh connection per guess: the per-connection scrypt budget never runs out.
        var connection: Int64 = 100
        func fresh() -> Caller {
            connection += 1
            return h.connect(ConnectionID(UInt64(connection)), as: 2)
        }
        for _ in 0..<limit {
            let wrong = try await join(h, fresh(), "guess")
            guard case .failure(let error) = wrong else {
                Issue.record("joined with a wrong password")
                return
            }
            #expect(error.code == .wrongPassword)
        }
        let refused = try await join(h, fresh(), "right")
        let wait = try #require(retryAfter(refused), "the guess after the limit was judged")
        #expect(wait > 0 && wait <= HubConfiguration().eventPasswordWindowMs)
        // Public events and the owner's own event cost nothing, even now.
        let owner = h.connect(ConnectionID(1), as: 1)
        _ = try await outcome(h) { h.hub.pictureEvents.create(owner, tag: "open", title: nil, password: nil, $0) }
            .get()
        #expect(try await join(h, fresh(), "anything", tag: "open").get().member)
        #expect(try await join(h, owner, nil).get().member)
        // After the wait the right password joins.
        h.clock.advance(by: wait)
        #expect(try await join(h, fresh(), "right").get().member)
        #expect(try await join(h, fresh(), nil).get().member, "a member needs no password")
    }

    @Test func manyAccountsMeetTheEventsBackOff() async throws {
        let free = HubConfiguration().eventFailuresBeforeBackoff
        let h = try await scene(users: free + 2)
        // One guess per account, each on its own connection: only the back-off across users stops them.
        for n in 0..<free {
            let user = Int64(n + 2)
            let wrong = try await join(h, h.connect(ConnectionID(UInt64(100 + n)), as: user), "guess-\(n)")
            guard case .failure(let error) = wrong else {
                Issue.record("joined with a wrong password")
                return
            }
            #expect(error.code == .wrongPassword)
        }
        let last = h.connect(ConnectionID(99), as: Int64(free + 2))
        let wait = try #require(retryAfter(try await join(h, last, "right")), "the event did not back off")
        #expect(wait == HubConfiguration().relicBackoffBaseMs)
        // Refused guesses count nothing: after the first back-off the right password joins, and the count is gone.
        h.clock.advance(by: wait)
        #expect(try await join(h, last, "right").get().member)
    }
}
