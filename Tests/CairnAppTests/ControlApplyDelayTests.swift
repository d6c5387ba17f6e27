// The test-only apply delay is read from the environment once, at start: unset is off, a positive integer is that
// many milliseconds, and anything else is ignored with a warning naming the variable (never a silent delay).
import Testing

@testable import CairnApp

@Suite(.timeLimit(.minutes(5)))
struct ControlApplyDelayTests {
    @Test func readsAPositiveIntegerOfMillisecondsAndNothingElse() {
        let name = ControlApplyDelay.variable
        #expect(name == "CAIRN_TEST_CLUSTER_APPLY_DELAY_MS")
        #expect(ControlApplyDelay.setting([:]) == .off)
        #expect(ControlApplyDelay.setting(["OTHER": "1500"]) == .off)
        #expect(ControlApplyDelay.setting([name: "1500"]) == .milliseconds(1500))
        for bad in ["0", "-5", "1.5", "soon", ""] {
            guard case .invalid(let warning) = ControlApplyDelay.setting([name: bad]) else {
                Issue.record("\(name)=\(bad) was not refused")
                continue
            }
            #expect(warning.contains("\(name)=\(bad)") && warning.contains("ignored"))
        }
    }
}
