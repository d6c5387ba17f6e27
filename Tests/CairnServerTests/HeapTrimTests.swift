import Testing

// When the hub gives a burst's free memory back: once a burst's worth of connections came or went and a quiet second
// follows; never twice within ten seconds, however the connections come (a client opening and closing connections in
// bursts cannot make the hub walk its heap every other second); after the longest wait when they never stop coming.
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

    @Test func theFirstBurstIsTrimmedOnceTheFirstQuietSecondFollows() {
        var policy = HeapTrimPolicy()
        #expect(trims(&policy, perSecond: [4_000, 6_000, 50, 3, 0, 0, 0]) == [4])
    }

    @Test func burstsEveryOtherSecondAreTrimmedAtMostOnceInTenSeconds() {
        var policy = HeapTrimPolicy()
        // 1,000 connections opened and closed, a quiet second, again and again, for three minutes.
        let seconds = trims(&policy, perSecond: Array(repeating: [1_000, 0], count: 90).flatMap { $0 })
        #expect(seconds == Array(stride(from: 2, through: 172, by: 10)))
    }

    @Test func aSmallTrickleIsNotTrimmedUntilABurstsWorthHasChanged() {
        var policy = HeapTrimPolicy()
        // Five a second: the 1,000th change comes in the 200th second.
        #expect(trims(&policy, perSecond: Array(repeating: 5, count: 250)) == [200])
    }

    @Test func connectionsThatNeverStopComingAreTrimmedAfterTheLongestWait() {
        var policy = HeapTrimPolicy()
        let seconds = trims(&policy, perSecond: Array(repeating: 100, count: 700))
        #expect(seconds == [290, 590])
    }

    @Test func closesCountLikeOpensAndEachSettledBurstIsTrimmedOnce() {
        var policy = HeapTrimPolicy()
        // 10,000 in, quiet for two minutes, 10,000 out, quiet.
        let quiet = Array(repeating: 0, count: 119)
        #expect(trims(&policy, perSecond: [10_000] + quiet + [10_000, 0, 0]) == [2, 122])
    }
}
