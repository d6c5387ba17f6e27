// The reconnect delay: doubles from the base, stops at the cap, keeps half of it fixed and jitters the other half,
// and starts over after a success.
import Testing

@testable import CairnCluster

@Suite(.timeLimit(.minutes(5))) struct ReconnectBackoffTests {
    @Test func doublesUpToTheCapWithoutJitterAtZero() {
        var backoff = ReconnectBackoff(base: 0.1, cap: 1)
        let delays = (0..<6).map { _ in backoff.next(random: 0) }
        #expect(delays == [0.05, 0.1, 0.2, 0.4, 0.5, 0.5])
        #expect(backoff.attempts == 6)
    }

    @Test func jitterSpansTheUpperHalf() {
        var low = ReconnectBackoff(base: 0.2, cap: 10)
        var high = ReconnectBackoff(base: 0.2, cap: 10)
        #expect(low.next(random: 0) == 0.1)
        #expect(abs(high.next(random: 0.999_999) - 0.2) < 1e-6)
        var middle = ReconnectBackoff(base: 0.2, cap: 10)
        #expect(abs(middle.next(random: 0.5) - 0.15) < 1e-9)
    }

    @Test func resetStartsFromTheBaseAgain() {
        var backoff = ReconnectBackoff(base: 0.1, cap: 5)
        for _ in 0..<10 { _ = backoff.next(random: 0) }
        #expect(backoff.next(random: 0) == 2.5)
        backoff.reset()
        #expect(backoff.next(random: 0) == 0.05)
    }

    @Test func manyFailuresDoNotOverflow() {
        var backoff = ReconnectBackoff(base: 0.1, cap: 5)
        for _ in 0..<200 { #expect(backoff.next(random: 1) <= 5) }
    }
}
