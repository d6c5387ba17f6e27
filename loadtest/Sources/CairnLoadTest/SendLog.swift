// Matches a delivery with its send. Every report of a user carries a `ts` unique to that user, and this log keeps,
// per user, the last few (ts → monotonic send instant) pairs in a ring. The sender and every watcher live in this
// one process, so a delivery's latency is exact to the nanosecond even though `ts` on the wire is in milliseconds.
// The server may drop superseded positions (latest wins); a delivery whose ts left the ring counts as unmatched.

/// Recent sends per user: (ts in ms) → send instant (monotonic ns).
public struct SendLog: Sendable {
    /// Sends remembered per user.
    public let depth: Int
    private var stamps: [Int64]
    private var instants: [UInt64]
    private var next: [UInt8]

    /// A log for `users` users remembering the last `depth` (≤ 255) sends of each.
    public init(users: Int, depth: Int = 64) {
        precondition(depth >= 1 && depth <= 255)
        self.depth = depth
        stamps = [Int64](repeating: 0, count: users * depth)
        instants = [UInt64](repeating: 0, count: users * depth)
        next = [UInt8](repeating: 0, count: users)
    }

    /// Remembers that `user` sent `ts` at `instant`.
    public mutating func record(user: Int, ts: Int64, instant: UInt64) {
        let slot = Int(next[user])
        stamps[user * depth + slot] = ts
        instants[user * depth + slot] = instant
        next[user] = UInt8((slot + 1) % depth)
    }

    /// The instant `user` sent `ts`, if it is still remembered.
    public func instant(user: Int, ts: Int64) -> UInt64? {
        guard user >= 0 && user < next.count else { return nil }
        var slot = Int(next[user])
        for _ in 0..<depth {  // newest first: a delivery is nearly always of the latest send
            slot = slot == 0 ? depth - 1 : slot - 1
            let i = user * depth + slot
            if stamps[i] == ts && ts != 0 { return instants[i] }
        }
        return nil
    }
}
