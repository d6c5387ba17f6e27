// A test-only knob: with `CAIRN_TEST_CLOCK_OFFSET_MS` set (an integer of milliseconds, negative for a clock that is
// behind), the hub's wall clock reads that much off the machine's. It lets an integration test run several hubs on
// one machine as if their clocks disagreed (clock skew between nodes: presence expiry, rule versions and every time
// the hub stamps come from that clock), without root, `date -s` or a preloaded library. Read once when the hub
// starts, never a configuration option; the hub logs a warning when it is set.
import CairnCore
import Foundation

/// The machine's clock read a fixed offset off.
struct SkewedClock: Clock {
    let base: any Clock
    let offsetMs: Int64

    func now() -> Int64 { base.now() + offsetMs }
}

/// What `CAIRN_TEST_CLOCK_OFFSET_MS` asks for.
enum ClockSkew {
    /// The environment variable that turns it on.
    static let variable = "CAIRN_TEST_CLOCK_OFFSET_MS"

    /// What the environment asks for.
    enum Setting: Equatable {
        /// Unset: the machine's clock.
        case off
        /// The clock reads this many milliseconds ahead (negative: behind).
        case milliseconds(Int64)
        /// Set to something that is not an integer (ignored, with this warning).
        case invalid(String)
    }

    /// The offset `environment` asks for; 0 counts as unset.
    static func setting(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Setting {
        guard let raw = environment[variable] else { return .off }
        guard let ms = Int64(raw) else {
            return .invalid("\(variable)=\(raw) is not a number of milliseconds; ignored")
        }
        return ms == 0 ? .off : .milliseconds(ms)
    }
}
