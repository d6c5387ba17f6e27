// A password that guards one thing (a relic, a private event) is guessed one thing at a time, but by anyone: a
// per-user limit alone lets an attacker spread guesses over fresh accounts and connections. This counts wrong
// attempts per guarded thing across all users; after a few free ones each further failure doubles the time the thing
// refuses password attempts (up to a cap), and a quiet window or a right password forgets the count. The owner never
// needs the password (a relic's creator, an event's members), so a back-off cannot lock them out.
// Attempts count when they start, before scrypt has judged them, so parallel guesses cannot slip past the limit;
// an attempt that was never judged (the thing vanished meanwhile) is handed back. Entries whose window has passed
// are pruned as the table grows, so memory is bounded by the things guessed at recently.

/// Wrong-password back-off per guarded thing (a relic's or an event's id). Loop thread only.
struct PasswordBackoff {
    private struct Entry {
        var failures = 0
        var lastAt: Int64 = 0
        var blockedUntil: Int64 = .min
    }

    /// Failures allowed before backing off.
    let free: Int
    /// First back-off (ms); each further failure doubles it.
    let baseMs: Int64
    /// Longest back-off (ms).
    let maxMs: Int64
    /// Quiet time after which the count is forgotten (ms).
    let windowMs: Int64
    private var entries: [Int64: Entry] = [:]
    /// Prune when the table grows past this; doubles with what survives, so pruning is O(1) amortised.
    private var pruneAt = 1024

    init(free: Int, baseMs: Int64, maxMs: Int64, windowMs: Int64) {
        self.free = max(1, free)
        self.baseMs = max(1, baseMs)
        self.maxMs = max(self.baseMs, maxMs)
        self.windowMs = max(1, windowMs)
    }

    /// Things with a count (for tests).
    var tracked: Int { entries.count }

    /// Counts an attempt at `relic` (or any guarded id); the milliseconds to wait when it is backing off (nothing
    /// counted then).
    mutating func attempt(_ relic: Int64, now: Int64) -> Int64? {
        var entry = entries[relic] ?? Entry()
        if now < entry.blockedUntil { return entry.blockedUntil - now }
        if now - max(entry.lastAt, entry.blockedUntil) > windowMs { entry = Entry() }
        entry.failures += 1
        entry.lastAt = now
        if entry.failures >= free {
            let doublings = min(entry.failures - free, 40)
            let wait = doublings >= 32 ? maxMs : min(maxMs, baseMs << Int64(doublings))
            entry.blockedUntil = now + wait
        }
        entries[relic] = entry
        if entries.count > pruneAt {
            entries = entries.filter { now - $0.value.lastAt <= windowMs || now < $0.value.blockedUntil }
            pruneAt = max(1024, entries.count * 2)
        }
        return nil
    }

    /// The attempt counted at `relic` was never judged: it does not count (a back-off it started stays).
    mutating func forgive(_ relic: Int64) {
        guard var entry = entries[relic] else { return }
        entry.failures -= 1
        entries[relic] = entry.failures <= 0 && entry.blockedUntil == .min ? nil : entry
    }

    /// Someone knew the password: the count starts again.
    mutating func succeeded(_ relic: Int64) { entries[relic] = nil }

    /// The relic is gone.
    mutating func forget(_ relic: Int64) { entries[relic] = nil }
}
