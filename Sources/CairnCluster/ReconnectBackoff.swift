// How long to wait before the next connection attempt: exponential from `base` up to `cap`, with "equal jitter"
// (half the delay fixed, half random) so nodes that lost the same Redis do not reconnect in lockstep. Pure: the
// random fraction is passed in, so tests pin it.

/// Exponential reconnect back-off with jitter.
public struct ReconnectBackoff: Sendable, Equatable {
    /// The first delay, seconds.
    public var base: Double
    /// The largest delay, seconds.
    public var cap: Double
    /// Failed attempts since the last success.
    public private(set) var attempts = 0

    /// Creates a back-off that starts at `base` seconds and never waits more than `cap`.
    public init(base: Double = 0.1, cap: Double = 5) {
        self.base = base
        self.cap = cap
    }

    /// The delay before the next attempt, given a random fraction in [0, 1); counts the attempt.
    public mutating func next(random: Double) -> Double {
        let exponent = min(attempts, 30)
        let ceiling = min(cap, base * Double(1 << exponent))
        attempts += 1
        return ceiling / 2 + ceiling / 2 * min(max(random, 0), 1)
    }

    /// A connection succeeded: the next failure starts from `base` again.
    public mutating func reset() { attempts = 0 }
}
