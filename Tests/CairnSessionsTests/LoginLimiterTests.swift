// The sliding-window limiter behind failed-login throttling.
import CairnHubTestSupport
import CairnLoop
import CairnSessions
import Testing

@Suite(.timeLimit(.minutes(5)))
struct LoginLimiterTests {
    @Test func blocksAfterLimitAndReportsTheWait() {
        let limiter = LoginLimiter(limit: 2, windowMs: 1000)
        #expect(limiter.retryAfter("k", now: 0) == nil)
        limiter.recordFailure("k", now: 100)
        #expect(limiter.retryAfter("k", now: 150) == nil)
        limiter.recordFailure("k", now: 200)
        #expect(limiter.retryAfter("k", now: 250) == 850)  // the failure at 100 leaves the window at 1100
        #expect(limiter.retryAfter("k", now: 1101) == nil)
        #expect(limiter.retryAfter("other", now: 250) == nil)
    }

    @Test func forgetsKeysWhoseFailuresExpired() {
        let limiter = LoginLimiter(limit: 1, windowMs: 10)
        limiter.recordFailure("a", now: 0)
        #expect(limiter.trackedKeys == 1)
        #expect(limiter.retryAfter("a", now: 11) == nil)
        #expect(limiter.trackedKeys == 0)
    }
}

/// A flood of distinct keys (an attacker cycling usernames) must not make every attempt walk the whole table.
@Suite(.timeLimit(.minutes(5)))
struct LoginLimiterPruningTests {
    @Test func pruningStaysRareUnderAFloodOfFreshKeys() {
        let limiter = LoginLimiter(limit: 5, windowMs: 60_000)
        for n in 0..<100_000 { _ = limiter.attempt("user\(n)", now: 1_000 + Int64(n / 1000)) }
        // Every key is still inside the window, so nothing can be pruned; the table is walked only when it has
        // doubled since the last walk (4096, 8192, … 65536, 131072): a handful of times, not once per attempt.
        #expect(limiter.trackedKeys == 100_000)
        #expect(limiter.prunes <= 6)
    }
}
