// How fast one tracker may report: a token bucket per tracker, refilled at `perSecond` up to `burst`, taken once per
// request after the tracker has proved who it is (a stranger's request never touches a tracker's bucket, so nobody
// can spend a device's budget without its key, and a refusal says nothing about an id the caller cannot prove).
// A request that finds the bucket empty is refused (`IngestRefusal.rateLimited`, 429 with `Retry-After`) before
// anything is read or written for it.
//
// Memory stays bounded by the trackers that reported lately: a bucket that has filled up again is the same as no
// bucket, so when the table has doubled since it was last swept, the full ones are dropped (amortised O(1) per
// request). Requests arrive on the HTTP services' tasks, several at once, so the table sits behind a lock.
import Synchronization

/// The ingest's request budget per tracker. Safe from any thread.
final class IngestRate: Sendable {
    private struct Bucket {
        var tokens: Double
        var at: Int64
    }

    private struct State {
        var buckets: [Int64: Bucket] = [:]
        /// The table's size after the last sweep; the next sweep runs when it has doubled.
        var sweptAt = 0
    }

    /// Requests per second, sustained; 0 or less turns the limit off.
    let perSecond: Double
    /// Requests at once above the sustained rate.
    let burst: Int
    private let state = Mutex(State())
    /// Buckets kept before the first sweep.
    static let minimumSweep = 1024

    init(perSecond: Double, burst: Int) {
        self.perSecond = perSecond
        self.burst = max(1, burst)
    }

    /// Takes a token of `tracker`'s bucket at `now` (ms): nil when allowed, else the milliseconds until a token is
    /// there again (nothing is taken then).
    func take(_ tracker: Int64, now: Int64) -> Int64? {
        guard perSecond > 0 else { return nil }
        let full = Double(burst)
        return state.withLock { s -> Int64? in
            var bucket = s.buckets[tracker] ?? Bucket(tokens: full, at: now)
            if now > bucket.at {
                bucket.tokens = min(full, bucket.tokens + Double(now - bucket.at) * perSecond / 1000)
                bucket.at = now
            }
            guard bucket.tokens >= 1 else {
                s.buckets[tracker] = bucket
                return Int64(((1 - bucket.tokens) * 1000 / perSecond).rounded(.up))
            }
            bucket.tokens -= 1
            s.buckets[tracker] = bucket
            if s.buckets.count >= max(Self.minimumSweep, 2 * s.sweptAt) { sweep(&s, now: now, full: full) }
            return nil
        }
    }

    /// Trackers with a bucket (for tests of the bound).
    var tracked: Int { state.withLock { $0.buckets.count } }

    /// Drops the buckets that have filled up again by `now`.
    private func sweep(_ s: inout State, now: Int64, full: Double) {
        let perSecond = perSecond
        s.buckets = s.buckets.filter { _, bucket in
            bucket.tokens + Double(max(0, now - bucket.at)) * perSecond / 1000 < full
        }
        s.sweptAt = s.buckets.count
    }
}
