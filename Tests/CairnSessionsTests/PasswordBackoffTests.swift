import Testing

// The password back-off per relic or event: a few free attempts, then each failure doubles the wait up to a cap; a
// quiet window or a right password forgets the count; an attempt never judged is handed back; quiet entries are
// pruned as the table grows.
@testable import CairnSessions

@Suite(.timeLimit(.minutes(5)))
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

    @Test func quietEntriesArePrunedAsTheTableGrows() {
        var backoff = PasswordBackoff(free: 2, baseMs: 1_000, maxMs: 8_000, windowMs: 60_000)
        _ = backoff.attempt(0, now: 0)
        _ = backoff.attempt(0, now: 0)  // backing off until 1 s
        for id in Int64(1)...1_000 { _ = backoff.attempt(id, now: 0) }
        #expect(backoff.tracked == 1_001)
        // Past the window every old entry is quiet; the next one that grows the table past its mark prunes them.
        for id in Int64(2_001)...2_024 { _ = backoff.attempt(id, now: 100_000) }
        #expect(backoff.tracked == 24)
        #expect(backoff.attempt(2_001, now: 100_000) == nil)  // its second failure starts a back-off
        #expect(backoff.attempt(2_001, now: 100_000) == 1_000, "a live entry survives the prune")
    }

    @Test func aPatientGuesserIsHeldAtTheCap() {
        // The defaults of a private event (and a relic): 10 free, 1 s doubling to 1 h, a 15 min quiet window. A
        // guesser who tries again the moment each back-off ends is never quiet, so the wait must reach the cap.
        var backoff = PasswordBackoff(free: 10, baseMs: 1_000, maxMs: 3_600_000, windowMs: 15 * 60 * 1000)
        var now: Int64 = 0
        var longest: Int64 = 0
        var judged = 0
        while now < 24 * 3_600_000 {
            if let wait = backoff.attempt(1, now: now) {
                longest = max(longest, wait)
                now += wait
            } else {
                judged += 1
            }
        }
        #expect(longest == 3_600_000, "the back-off never reached its cap")
        #expect(judged <= 60, "\(judged) guesses judged in a day")
    }
}
