import Testing

// When the hub gives a burst's free memory back: once a burst's worth of connections came or went and a quiet second
// follows, or after the longest wait while they keep coming; never for a steady trickle below a burst, and not
// again until another burst's worth has changed.
@testable import CairnServer

@Suite(.timeLimit(.minutes(5)))
struct HeapTrimTests {
    /// Feeds one count of changes per second; returns the seconds (1-based) at which a trim was called for.
    private func trims(_ policy: inout HeapTrimPolicy, perSecond: [Int]) -> [Int] {
        var total = 0
        var seconds: [Int] = []
        for (n, changes) in perSecond.enumerated() {
            total += changes
            if policy.second(changes: total) { seconds.append(n + 1) }
        }
        return seconds
    }

    @Test func aBurstIsTrimmedOnceTheFirstQuietSecondFollows() {
        var policy = HeapTrimPolicy()
        #expect(trims(&policy, perSecond: [4_000, 6_000, 50, 3, 0, 0, 0]) == [4])
    }

    @Test func aSteadyTrickleBelowABurstIsNeverTrimmed() {
        var policy = HeapTrimPolicy()
        #expect(trims(&policy, perSecond: Array(repeating: 5, count: 150)).isEmpty)
    }

    @Test func connectionsThatKeepComingAreTrimmedAfterTheLongestWait() {
        var policy = HeapTrimPolicy()
        #expect(trims(&policy, perSecond: Array(repeating: 100, count: 130)) == [60, 120])
    }

    @Test func closesCountLikeOpensAndEachBurstIsTrimmedOnce() {
        var policy = HeapTrimPolicy()
        // 10,000 in, quiet, 10,000 out, quiet.
        #expect(trims(&policy, perSecond: [10_000, 0, 0, 10_000, 0, 0]) == [2, 5])
    }
}
