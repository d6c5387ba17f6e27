// A figure that costs a walk over every connection (bytes and positions still waiting to be written) is read at
// most once per interval and shared by everyone who asks meanwhile — `/healthz` probes, `/metrics` scrapes and the
// stats channel — so a flood of scrapes cannot make the loop walk a hundred thousand connections per request. The
// price is a reading up to one interval old, which is what a once-a-second dashboard shows anyway.

/// Caches the result of an expensive reading for `intervalNs`. Service thread only.
struct PeriodicReading<Value> {
    private let intervalNs: UInt64
    private let read: () -> Value
    private var last: (value: Value, at: UInt64)?
    /// How many times the reading was actually taken (for tests).
    private(set) var readings = 0

    /// A reading taken by `read`, reused for `intervalNs` nanoseconds.
    init(intervalNs: UInt64 = 1_000_000_000, read: @escaping () -> Value) {
        self.intervalNs = intervalNs
        self.read = read
    }

    /// The value, read anew if the last reading is older than the interval at `now` (monotonic ns).
    mutating func value(now: UInt64) -> Value {
        if let last, now >= last.at, now - last.at < intervalNs { return last.value }
        let value = read()
        readings += 1
        last = (value, now)
        return value
    }
}

/// The WebSocket side's pending totals (coalesced positions, bytes), as `/healthz`, `/metrics` and the stats
/// channel share them. Service thread only.
final class PendingTotals {
    private var reading: PeriodicReading<(coalesced: Int, bytes: Int)>

    init(_ webSockets: WebSocketEndpoint) {
        reading = PeriodicReading { [unowned webSockets] in webSockets.pending() }
    }

    /// The totals, at most a second old.
    func now() -> (coalesced: Int, bytes: Int) { reading.value(now: MonotonicTime.now()) }
}
