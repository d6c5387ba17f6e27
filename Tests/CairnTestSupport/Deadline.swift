// Why this exists: every blocking step of the test clients (connect, read, write, waiting for a server's output)
// is bounded by one absolute deadline, so a server that misbehaves fails the test quickly instead of hanging CI.
// A deadline is computed once per public call and shared by all the reads and writes that call makes.

import Foundation

/// An absolute point in time on the monotonic clock, measured from when it was made.
struct Deadline {
    let instant: ContinuousClock.Instant

    /// A deadline `seconds` from now (negative values mean "already passed"; huge values are capped at a day).
    init(seconds: Double) {
        let clamped = min(max(seconds, 0), 86_400)
        instant = ContinuousClock.now + .nanoseconds(Int64((clamped * 1e9).rounded()))
    }

    /// Seconds left, never negative.
    var remainingSeconds: Double {
        let left = instant - ContinuousClock.now
        let (seconds, attoseconds) = left.components
        return max(0, Double(seconds) + Double(attoseconds) / 1e18)
    }

    var hasPassed: Bool { ContinuousClock.now >= instant }

    /// The remaining time as a `poll()` timeout: milliseconds, rounded up so we never spin on a 0 ms poll.
    var pollMilliseconds: Int32 {
        let ms = (remainingSeconds * 1000).rounded(.up)
        return Int32(min(ms, Double(Int32.max)))
    }
}
