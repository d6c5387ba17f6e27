// How fast one connection may send requests: a token bucket per connection, refilled at `messagesPerSecond` up to
// `messageBurst`. A request that finds the bucket empty is answered `rate_limited` (with `retry_after_ms`) and not
// handled; a connection that goes on sending while refused — another full burst of refused requests — is closed
// with 4429, so a flood costs the hub one comparison per line and then nothing. The time is read once per frame.

/// One connection's request budget. Plain values, kept in the router's per-connection state.
struct MessageRate {
    private var tokens: Double
    private var refusedInARow = 0
    private var at: Int64

    /// A full bucket at `now` (ms).
    init(burst: Int, now: Int64) {
        tokens = Double(burst)
        at = now
    }

    /// What to do with one more request.
    enum Verdict: Equatable {
        /// Handle it.
        case allow
        /// Answer `rate_limited`; the bucket has a token again after this many milliseconds.
        case refuse(retryAfterMs: Int64)
        /// Close the connection: it kept on after being refused.
        case close
    }

    /// Takes a token for a request at `now` (ms), refilling at `perSecond` up to `burst` first.
    mutating func take(now: Int64, perSecond: Int, burst: Int) -> Verdict {
        if now > at {
            tokens = min(Double(burst), tokens + Double(now - at) * Double(perSecond) / 1000)
            at = now
        }
        if tokens >= 1 {
            tokens -= 1
            refusedInARow = 0
            return .allow
        }
        refusedInARow += 1
        if refusedInARow > burst { return .close }
        return .refuse(retryAfterMs: Int64(((1 - tokens) * 1000 / Double(perSecond)).rounded(.up)))
    }
}
