// Time as the domain sees it: milliseconds since the Unix epoch, the unit of `ts` on the wire. Injected so tests
// can move time by hand instead of sleeping (auth deadlines, rate-limit windows, later expiry).
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A source of wall-clock time in milliseconds since the Unix epoch.
public protocol Clock: Sendable {
    /// The current time in milliseconds since the Unix epoch.
    func now() -> Int64
}

/// The system's real-time clock.
public struct SystemClock: Clock {
    /// Creates the system clock.
    public init() {}

    /// Reads `CLOCK_REALTIME`.
    public func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}

/// A clock that moves only when told to; for tests and simulations.
public final class ManualClock: Clock {
    private let current: Mutex<Int64>

    /// Creates a clock reading `start` milliseconds.
    public init(start: Int64 = 1_763_740_800_000) { current = Mutex(start) }

    /// The time last set.
    public func now() -> Int64 { current.withLock { $0 } }

    /// Moves the clock forward by `milliseconds`.
    public func advance(by milliseconds: Int64) { current.withLock { $0 += milliseconds } }
}
