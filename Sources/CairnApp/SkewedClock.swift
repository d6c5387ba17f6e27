// The hub's wall clock read a fixed offset off the machine's: what `cairn serve --clock-offset-ms` runs the hub on.
// It lets a test run several hubs on one machine as if their clocks disagreed (clock skew between nodes: presence
// expiry, rule versions and every time the hub stamps come from that clock), without root, `date -s` or a preloaded
// library. The hub takes its clock as a parameter like any other dependency; the offset is an explicit, hidden flag
// of `serve` (never read from the environment, never a configuration option), and `serve` logs a warning with it.
public import CairnCore

/// The machine's clock read a fixed offset off.
struct SkewedClock: Clock {
    let base: any Clock
    let offsetMs: Int64

    func now() -> Int64 { base.now() + offsetMs }
}

extension CairnApp {
    /// The clock a hub runs on: the machine's, read `offsetMs` off (ahead; negative: behind) when that is not 0.
    public static func machineClock(offsetMs: Int64 = 0) -> any Clock {
        offsetMs == 0 ? SystemClock() : SkewedClock(base: SystemClock(), offsetMs: offsetMs)
    }
}
