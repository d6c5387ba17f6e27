// The clock `cairn serve --clock-offset-ms` runs a hub on: the machine's clock itself without an offset, and read
// that far off (either sign) with one.
import CairnCore
import Testing

@testable import CairnApp

@Suite(.timeLimit(.minutes(5)))
struct SkewedClockTests {
    @Test func noOffsetIsTheMachinesClockAndAnOffsetReadsItThatFarOff() throws {
        #expect(CairnApp.machineClock() is SystemClock)
        #expect(CairnApp.machineClock(offsetMs: 0) is SystemClock)
        for offset: Int64 in [-600_000, 600_000] {
            let skewed = try #require(CairnApp.machineClock(offsetMs: offset) as? SkewedClock)
            #expect(skewed.offsetMs == offset && skewed.base is SystemClock)
        }
    }

    @Test func theSkewedClockReadsTheBaseOffByTheOffset() {
        let base = ManualClock()
        let behind = SkewedClock(base: base, offsetMs: -600_000)
        #expect(behind.now() == base.now() - 600_000)
        base.advance(by: 1_234)
        #expect(behind.now() == base.now() - 600_000)
    }
}
