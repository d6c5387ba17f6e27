// Failed-login throttling. Each key (a username, or a connection) may fail `limit` times within a sliding window;
// after that it is refused with `rate_limited` until its oldest failure leaves the window. A success does not wipe
// the record: an attacker who also knows one good password gains nothing. Old entries are pruned as they expire,
// so memory stays bounded by the number of keys that failed recently.
import Synchronization

/// Counts recent failures per key and says when a key must wait.
public final class LoginLimiter: Sendable {
    private let state = Mutex<[String: [Int64]]>([:])
    /// Failures allowed within the window.
    public let limit: Int
    /// The window, in milliseconds.
    public let windowMs: Int64

    /// Creates a limiter allowing `limit` failures per `windowMs`.
    public init(limit: Int, windowMs: Int64) {
        precondition(limit >= 1 && windowMs >= 1)
        self.limit = limit
        self.windowMs = windowMs
    }

    /// If `key` is blocked at `now`, the milliseconds until it may try again; otherwise nil.
    public func retryAfter(_ key: String, now: Int64) -> Int64? {
        state.withLock { table in
            guard var times = table[key] else { return nil }
            times.removeAll { $0 <= now - windowMs }
            if times.isEmpty { table[key] = nil; return nil }
            table[key] = times
            guard times.count >= limit else { return nil }
            return times[times.count - limit] + windowMs - now
        }
    }

    /// Counts an attempt of `key` at `now` before it is checked, so that attempts made in parallel cannot all slip
    /// past the limit while each is being verified. Returns the wait if `key` is blocked (nothing is counted then).
    /// A successful attempt is handed back with `forgive(_:at:)`.
    public func attempt(_ key: String, now: Int64) -> Int64? {
        state.withLock { table in
            var times = table[key, default: []]
            times.removeAll { $0 <= now - windowMs }
            if times.count >= limit {
                table[key] = times
                return times[times.count - limit] + windowMs - now
            }
            times.append(now)
            table[key] = times
            if table.count > 4096 { Self.prune(&table, before: now - windowMs) }
            return nil
        }
    }

    /// Withdraws one attempt counted at `time` (it succeeded).
    public func forgive(_ key: String, at time: Int64) {
        state.withLock { table in
            guard var times = table[key], let i = times.lastIndex(of: time) else { return }
            times.remove(at: i)
            table[key] = times.isEmpty ? nil : times
        }
    }

    /// Forgets every attempt of `key` (for limits where a success proves the caller needs no more guesses, such as
    /// a relic's password for one user).
    public func reset(_ key: String) {
        _ = state.withLock { $0.removeValue(forKey: key) }
    }

    /// Records a failure of `key` at `now`.
    public func recordFailure(_ key: String, now: Int64) {
        state.withLock { table in
            var times = table[key, default: []]
            times.removeAll { $0 <= now - windowMs }
            times.append(now)
            if times.count > limit { times.removeFirst(times.count - limit) }
            table[key] = times
            if table.count > 4096 { Self.prune(&table, before: now - windowMs) }
        }
    }

    /// The number of keys currently tracked (for tests and metrics).
    public var trackedKeys: Int { state.withLock { $0.count } }

    private static func prune(_ table: inout [String: [Int64]], before cutoff: Int64) {
        table = table.filter { $0.value.last.map { $0 > cutoff } ?? false }
    }
}
