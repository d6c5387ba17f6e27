// The two clocks of a run: a monotonic one for every interval (latency, connect time, pacing) and the wall clock
// only for the `ts` a position carries, which the server checks against its own.
import Glibc

/// Reads the process's clocks.
public enum LoadClock {
    /// Monotonic nanoseconds.
    @inline(__always)
    public static func monotonicNanoseconds() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return UInt64(t.tv_sec) &* 1_000_000_000 &+ UInt64(t.tv_nsec)
    }

    /// Milliseconds since the Unix epoch.
    public static func wallMilliseconds() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_REALTIME, &t)
        return Int64(t.tv_sec) * 1000 + Int64(t.tv_nsec) / 1_000_000
    }
}
