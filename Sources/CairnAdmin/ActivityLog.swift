// Who was active on which UTC day, for the `active_users` figure (docs/PROTOCOL.md, Administration): a registered
// account counts on a day when it authenticated (a login, a token, a registration) or sent an op that day. Cheap on
// purpose: noting a user is a set insertion on the loop, once per user per day it costs anything more; the day's new
// marks reach the store in one batch per tick, off the loop (`ActivityStore`), like guests' last activity. The day
// turns on the tick, so an op in the first second after midnight may count for the day before. Marks not yet
// written when the process dies are lost (at most a tick's worth); a clean shutdown writes them.
package import CairnCore
import Logging

/// Durable storage of daily activity.
public protocol ActivityStore: Sendable {
    /// Records that each of `users` was active on `day` (days since 1970-01-01, UTC); recording twice is harmless.
    func recordActivity(_ users: [Int64: [Int64]]) async throws
}

/// Notes active users per UTC day and writes them in batches. Loop thread only.
package final class ActivityLog {
    private let store: (any ActivityStore)?
    private let work: LoopWork
    /// The day marks are counted for now.
    private var day: Int64
    /// Users noted today.
    private var today: Set<Int64> = []
    /// The user noted last: a run of one user's ops (a stream of `pos`) costs a comparison each.
    private var last: Int64 = 0
    /// Marks not yet written, by day.
    private var pending: [Int64: [Int64]] = [:]
    private var writing = false
    /// Set by `flushBeforeShutdown`: a write that finishes then writes what was noted meanwhile at once.
    private var finalFlush = false

    package init(store: (any ActivityStore)?, work: LoopWork, now: Int64) {
        self.store = store
        self.work = work
        self.day = DailyStatsRange.day(of: now)
    }

    /// `user` authenticated or sent an op. Guests are not counted.
    package func note(_ user: User) {
        guard user.id != last else { return }
        last = user.id
        guard !user.isGuest, today.insert(user.id).inserted else { return }
        pending[day, default: []].append(user.id)
    }

    /// Once a tick: turns the day when it has changed and writes what was noted since the last write.
    package func tick(now: Int64) {
        let current = DailyStatsRange.day(of: now)
        if current != day {
            day = current
            today = []
            last = 0
        }
        flush()
    }

    /// The hub is shutting down: writes what is pending now, or as soon as the write in flight finishes (its
    /// completion runs before the drain can end, so nothing noted is left behind).
    package func flushBeforeShutdown() {
        finalFlush = true
        flush()
    }

    /// Writes the pending marks unless a write is running (its completion leaves the rest for the next tick, or
    /// writes it at once when shutting down).
    func flush() {
        guard let store, !writing, !pending.isEmpty else { return }
        writing = true
        let batch = pending
        pending = [:]
        work.background(
            { try await store.recordActivity(batch) },
            then: { result in
                self.writing = false
                if case .failure(let error) = result {
                    hubLogger.error("recording daily activity failed: \(error)")
                    for (day, users) in batch { self.pending[day, default: []].append(contentsOf: users) }
                } else if self.finalFlush {
                    self.flush()
                }
            })
    }
}
