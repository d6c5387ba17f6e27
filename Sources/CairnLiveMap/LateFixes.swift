// Late fixes (a `pos` older than the user's latest) waiting for the next snapshot, which writes them to the
// position history. A client replaying a long track, or flooding stale fixes on purpose, must not grow memory or the
// history table without limit, nor make the loop shift big arrays: each user gets a small ring of the most recent
// late arrivals (overwriting the oldest is O(1)), and the total across users is capped (beyond it new late fixes
// are dropped, also O(1)). Taking everything for a snapshot empties the rings but keeps their storage.
import CairnCore
import CairnSocial

/// Late fixes per user, bounded per user and in total. Loop thread only.
struct LateFixes {
    /// One user's ring: `storage` never grows past the per-user bound; `start` is the oldest kept.
    fileprivate struct Ring {
        var storage: [Fix] = []
        var start = 0
        var count = 0
    }

    /// Fixes kept per user between snapshots (the most recent arrivals win).
    let perUser: Int
    /// Fixes kept across all users between snapshots.
    let total: Int
    private var rings: [Int64: Ring] = [:]
    /// Fixes held now.
    private(set) var count = 0
    /// Late fixes dropped or overwritten since start (for operators and tests).
    private(set) var dropped = 0

    init(perUser: Int, total: Int) {
        self.perUser = max(0, perUser)
        self.total = max(0, total)
    }

    /// True when nothing waits.
    var isEmpty: Bool { count == 0 }

    /// Keeps `fix` for `user`: overwrites the user's oldest late fix when their ring is full, drops `fix` when the
    /// total is reached. Constant time.
    mutating func keep(_ fix: Fix, for user: Int64) {
        guard perUser > 0 else {
            dropped &+= 1
            return
        }
        if let full = rings[user].map({ $0.count == perUser }), full {
            rings[user]!.overwriteOldest(with: fix)
            dropped &+= 1
            return
        }
        guard count < total else {
            dropped &+= 1
            return
        }
        rings[user, default: Ring()].append(fix, capacity: perUser)
        count += 1
    }

    /// The fixes kept for `user`, oldest arrival first.
    func fixes(of user: Int64) -> [Fix] {
        guard let ring = rings[user] else { return [] }
        return (0..<ring.count).map { ring.storage[(ring.start + $0) % ring.storage.count] }
    }

    /// The storage one user's ring holds (never more than `perUser`).
    func capacity(of user: Int64) -> Int { rings[user]?.storage.count ?? 0 }

    /// Every fix kept, as rows for the store, and empties the rings (their storage is kept for reuse).
    mutating func takeAll() -> [StoredFix] {
        guard count > 0 else {
            rings.removeAll()  // every ring was idle since the last snapshot
            return []
        }
        var rows: [StoredFix] = []
        rows.reserveCapacity(count)
        var idle: [Int64] = []
        for user in rings.keys {
            if rings[user]!.count == 0 {
                idle.append(user)
                continue
            }
            rings[user]!.drain { rows.append(StoredFix(userID: user, fix: $0)) }
        }
        // A user who sent no late fix since the last snapshot gives their ring's storage back.
        for user in idle { rings[user] = nil }
        count = 0
        return rows
    }
}

extension LateFixes.Ring {
    mutating func append(_ fix: Fix, capacity: Int) {
        if count == storage.count {  // only while the storage is still growing towards `capacity`; start is 0 then
            storage.append(fix)
        } else {
            storage[(start + count) % storage.count] = fix
        }
        count += 1
    }

    mutating func overwriteOldest(with fix: Fix) {
        storage[start] = fix
        start = (start + 1) % storage.count
    }

    mutating func drain(_ body: (Fix) -> Void) {
        for i in 0..<count { body(storage[(start + i) % storage.count]) }
        start = 0
        count = 0
    }
}
