// Nanoseconds on the monotonic clock, for latencies the transport measures (fan-out, loop lag). The wall clock
// can jump; durations must not. CLOCK_MONOTONIC is read through the vDSO, tens of nanoseconds per call.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum MonotonicTime {
    /// Nanoseconds since an arbitrary fixed point (boot).
    @inline(__always)
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// `later - earlier` as a signed count (0 if the order is reversed).
    @inline(__always)
    static func elapsed(from earlier: UInt64, to later: UInt64) -> Int64 {
        later > earlier ? Int64(later - earlier) : 0
    }
}
