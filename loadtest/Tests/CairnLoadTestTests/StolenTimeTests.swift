import CairnLoadTest
import Testing

// Stolen time from /proc/stat: the steal column of each CPU's line (not the machine's total line), shares of an
// interval per CPU clamped to 0...1, nothing from a text without per-CPU lines or without the column, and a
// reading of this machine.
@Suite(.timeLimit(.minutes(1))) struct StolenTimeTests {
    private let stat = """
        cpu  9809593 94726 1214457 5994473 76847 0 244575 157094 0 0
        cpu0 4735334 49317 597230 3171014 17150 0 174978 76884 0 0
        cpu1 5074258 45408 617227 2823459 59696 0 69596 80209 0 0
        intr 1 2 3
        ctxt 42
        """

    @Test func eachCPUsStealColumnIsReadAndTheTotalLineIsNot() throws {
        #expect(StolenTime.parse(stat) == StolenTime(ticks: [76884, 80209]))
    }

    @Test func aTextWithoutPerCPULinesOrWithoutTheColumnGivesNothing() {
        #expect(StolenTime.parse("cpu  1 2 3 4 5 6 7 8\nintr 1\n") == nil)
        #expect(StolenTime.parse("cpu0 1 2 3 4 5 6 7\n") == nil)
        #expect(StolenTime.parse("") == nil)
    }

    @Test func sharesArePerCPUOfTheIntervalAndClamped() {
        let before = StolenTime(ticks: [100, 200])
        let after = StolenTime(ticks: [121, 200])
        #expect(after.shares(since: before, seconds: 1, ticksPerSecond: 100) == [0.21, 0])
        #expect(after.shares(since: before, seconds: 0.1, ticksPerSecond: 100) == [1, 0])
        #expect(before.shares(since: after, seconds: 1, ticksPerSecond: 100) == [0, 0])  // a counter never goes back
        #expect(after.shares(since: StolenTime(ticks: [1]), seconds: 1, ticksPerSecond: 100).isEmpty)
        #expect(after.shares(since: before, seconds: 0, ticksPerSecond: 100).isEmpty)
    }

    @Test func thisMachineHasAReading() throws {
        let now = try #require(StolenTime.sample())
        #expect(!now.ticks.isEmpty)
        #expect(StolenTime.sample(proc: "/nonexistent") == nil)
    }
}
