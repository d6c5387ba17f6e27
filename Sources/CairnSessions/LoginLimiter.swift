// Failed-login throttling. Each key (a username, or a connection) may fail `limit` times within a sliding window;
// after that it is refused with `rate_limited` until its oldest failure leaves the window. A success does not wipe
// the record: an attacker who also knows one good password gains nothing. Old entries are pruned as they expire,
// so memory stays bounded by the number of keys that failed recently.
import Synchronization

/// Counts recent failures per key and says when a key must wait.
public final class LoginLimiter: Sendable {
    private struct Table {
        var keys: [String: [Int64]] = [:]
        /// Prune when the table grows past this; doubles with what survives, so pruning is O(1) amortised even
        /// when every key is fresh (an attacker cycling usernames).
        var pruneAt = 4096
        var prunes = 0
    }

    private let state = Mutex(Table())
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
        state.withLock { t in
            guard var times = t.keys[key] else { return nil }
            times.removeAll { $0 <= now - windowMs }
            if times.isEmpty {
                t.keys[key] = nil
                return nil
            }
            t.keys[key] = times
            guard times.count >= limit else { return nil }
            return times[times.count - limit] + windowMs - now
        }
    }

    /// Counts an attempt of `key` at `now` before it is checked, so that attempts made in parallel cannot all slip
    /// past the limit while each is being verified. Returns the wait if `key` is blocked (nothing is counted then).
    /// A successful attempt is handed back with `forgive(_:at:)`.
    public func attempt(_ key: String, now: Int64) -> Int64? {
        state.withLock { t in
            var times = t.keys[key, default: []]
            times.removeAll { $0 <= now - windowMs }
            if times.count >= limit {
                t.keys[key] = times
                return times[times.count - limit] + windowMs - now
            }
            times.append(now)
            t.keys[key] = times
            Self.pruneIfDue(&t, before: now - windowMs)
            return nil
        }
    }

    /// Withdraws one attempt counted at `time` (it succeeded).
    public func forgive(_ key: String, at time: Int64) {
        state.withLock { t in
            guard var times = t.keys[key], let i = times.lastIndex(of: time) else { return }
            times.remove(at: i)
            t.keys[key] = times.isEmpty ? nil : times
        }
    }

    /// Forgets every attempt of `key` (for limits where a success proves the caller needs no more guesses, such as
    /// a relic's password for one user).
    public func reset(_ key: String) {
        _ = state.withLock { $0.keys.removeValue(forKey: key) }
    }

    /// Records a failure of `key` at `now`.
    public func recordFailure(_ key: String, now: Int64) {
        state.withLock { t in
            var times = t.keys[key, default: []]
            times.removeAll { $0 <= now - windowMs }
            times.append(now)
            if times.count > limit { times.removeFirst(times.count - limit) }
            t.keys[key] = times
            Self.pruneIfDue(&t, before: now - windowMs)
        }
    }

    /// The number of keys currently tracked (for tests and metrics).
    public var trackedKeys: Int { state.withLock { $0.keys.count } }

    /// How many times the table has been pruned (for tests: pruning must stay rare under a flood of new keys).
    public var prunes: Int { state.withLock { $0.prunes } }

    private static func pruneIfDue(_ t: inout Table, before cutoff: Int64) {
        guard t.keys.count > t.pruneAt else { return }
        t.keys = t.keys.filter { $0.value.last.map { $0 > cutoff } ?? false }
        t.pruneAt = max(4096, t.keys.count * 2)
        t.prunes += 1
    }
}
