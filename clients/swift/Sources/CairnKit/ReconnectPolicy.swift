// When and how soon to reconnect after a close (docs/PROTOCOL.md, "Close codes"): never after 1009 or 4500-4999,
// otherwise after an exponential back-off with jitter, and at least a long pause after 4429 (the hub stopped reading
// a client that kept sending over its rate). Pure arithmetic, so that tests check it exactly.

/// The close-code policy and the back-off of reconnects.
public struct ReconnectPolicy: Sendable, Equatable {
    /// The first back-off delay; it doubles per failed attempt.
    public var initialDelay: Duration
    /// The largest back-off delay.
    public var maximumDelay: Duration
    /// The least pause after a 4429 close.
    public var rateLimitPause: Duration
    /// How long a connection must stay up before the back-off starts again from ``initialDelay``: a hub that closes
    /// every connection right after it opens is not retried ever faster.
    public var stableAfter: Duration

    /// A policy; the defaults are those of the JavaScript client (500 ms doubling to 30 s, 30 s after 4429, stable
    /// after 10 s).
    public init(
        initialDelay: Duration = .milliseconds(500), maximumDelay: Duration = .seconds(30),
        rateLimitPause: Duration = .seconds(30), stableAfter: Duration = .seconds(10)
    ) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.rateLimitPause = rateLimitPause
        self.stableAfter = stableAfter
    }

    /// Whether a close code ends the connection for good: 1009 (a message too big: reconnecting would not fix the
    /// client) and 4500-4999 (invalid or revoked token, suspended account, authentication timeout).
    public static func isTerminal(closeCode code: UInt16) -> Bool {
        code == 1009 || (4500...4999).contains(code)
    }

    /// Whether a close code also ends the session: the token is invalid or revoked (4500) or the account suspended
    /// (4503), so signing in again with it is pointless.
    public static func endsSession(closeCode code: UInt16) -> Bool {
        code == 4500 || code == 4503
    }

    /// The delay before reconnect attempt `attempt` (0 for the first after a stable connection): the ceiling
    /// `initialDelay × 2^attempt`, capped at `maximumDelay`, times a factor drawn in [0.5, 1) from `random` (a number
    /// in [0, 1)); at least ``rateLimitPause`` after a 4429 close.
    public func delay(attempt: Int, closeCode: UInt16, random: Double) -> Duration {
        let factor = 1 << min(max(attempt, 0), 30)
        let ceiling = min(maximumDelay, initialDelay * factor)
        var delay = ceiling * (0.5 + min(max(random, 0), 1) / 2)
        if closeCode == 4429 { delay = max(delay, rateLimitPause) }
        return delay
    }
}
