import Testing

// The per-relic password back-off: a few free attempts, then each failure doubles the wait up to a cap; a quiet
// window or a right password forgets the count; an attempt never judged is handed back.
@testable import CairnDomain

struct PasswordBackoffTests {
    @Test func failuresBackOffExponentiallyUpToTheCap() {
        var backoff = PasswordBackoff(free: 3, baseMs: 1_000, maxMs: 8_000, windowMs: 60_000)
        var now: Int64 = 0
        #expect(backoff.attempt(1, now: now) == nil)
        #expect(backoff.attempt(1, now: now) == nil)
        #expect(backoff.attempt(1, now: now) == nil)  // the third starts a back-off of 1 s
        #expect(backoff.attempt(1, now: now) == 1_000)
        #expect(backoff.attempt(2, now: now) == nil, "another relic is not affected")
        var waits: [Int64] = []
        now = 1_000  // when the first back-off ends
        for _ in 0..<4 {
            #expect(backoff.attempt(1, now: now) == nil)
            let wait = backoff.attempt(1, now: now) ?? 0
            waits.append(wait)
            now += wait
        }
        #expect(waits == [2_000, 4_000, 8_000, 8_000])
    }

    @Test func aRightPasswordOrAQuietWindowForgets() {
        var backoff = PasswordBackoff(free: 2, baseMs: 1_000, maxMs: 8_000, windowMs: 60_000)
        _ = backoff.attempt(1, now: 0)
        _ = backoff.attempt(1, now: 0)
        #expect(backoff.attempt(1, now: 0) != nil)
        backoff.succeeded(1)
        #expect(backoff.attempt(1, now: 0) == nil)
        #expect(backoff.attempt(1, now: 0) == nil)  // second failure: backing off
        #expect(backoff.attempt(1, now: 500) != nil)
        #expect(backoff.attempt(1, now: 70_000) == nil, "a quiet window starts the count again")
        #expect(backoff.attempt(1, now: 70_000) == nil)
    }

    @Test func anUnjudgedAttemptIsHandedBack() {
        var backoff = PasswordBackoff(free: 2, baseMs: 1_000, maxMs: 8_000, windowMs: 60_000)
        _ = backoff.attempt(1, now: 0)
        backoff.forgive(1)
        #expect(backoff.tracked == 0)
        _ = backoff.attempt(1, now: 0)
        #expect(backoff.attempt(1, now: 0) == nil)
        #expect(backoff.attempt(1, now: 0) != nil)
    }
}
