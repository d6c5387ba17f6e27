// The test-only clock offset: read from its variable as an integer of milliseconds (either sign), anything else
// refused with a warning; the skewed clock reads the base clock that far off.
import CairnCore
import Testing

@testable import CairnApp

struct ClockSkewTests {
    @Test func readsAnIntegerOfMillisecondsOfEitherSignAndNothingElse() {
        let name = ClockSkew.variable
        #expect(name == "CAIRN_TEST_CLOCK_OFFSET_MS")
        #expect(ClockSkew.setting([:]) == .off)
        #expect(ClockSkew.setting([name: "0"]) == .off)
        #expect(ClockSkew.setting([name: "-600000"]) == .milliseconds(-600_000))
        #expect(ClockSkew.setting([name: "600000"]) == .milliseconds(600_000))
        for bad in ["1.5", "soon", ""] {
            guard case .invalid(let warning) = ClockSkew.setting([name: bad]) else {
                Issue.record("\(name)=\(bad) was not refused")
                continue
            }
            #expect(warning.contains("\(name)=\(bad)") && warning.contains("ignored"))
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
