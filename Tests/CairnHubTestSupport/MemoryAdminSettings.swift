// The memory store's part of admins' settings and daily activity, with the SQLite store's contracts (settings and
// their audit lines written together; a failing write writes neither), and the accounts' daily figures computed from
// its state the way the SQLite provider computes them from its tables.
public import CairnAdmin
import CairnCore
import Synchronization

extension MemoryAccountStore {
    public func adminSettings() async throws -> [String: String] {
        try state.withLock { s in
            if s.failReads { throw MemoryBucketStore.InjectedFailure() }
            return s.settings
        }
    }

    public func saveAdminSettings(set: [String: String], reset: [String], audit: [AuditEntry]) async throws {
        try state.withLock { s in
            if s.failWrites { throw MemoryBucketStore.InjectedFailure() }
            s.settings.merge(set) { _, new in new }
            for key in reset { s.settings[key] = nil }
            s.audit.append(contentsOf: audit)
        }
    }

    public func recordActivity(_ users: [Int64: [Int64]]) async throws {
        try state.withLock { s in
            if s.failWrites { throw MemoryBucketStore.InjectedFailure() }
            for (day, ids) in users { for id in ids { s.activity.insert([day, id]) } }
        }
    }

    /// New registered accounts and active ones per day, from the state.
    public var accountDailyStats: any DailyStatsProvider { MemoryAccountDailyStats(store: self) }
}

struct MemoryAccountDailyStats: DailyStatsProvider {
    let store: MemoryAccountStore

    var columns: [DailyStatColumn] { [.newUsers, .activeUsers] }

    func dailyStats(_ range: DailyStatsRange) async throws -> [DailyStatColumn: [Int64?]] {
        store.state.withLock { s in
            var created = [Int64?](repeating: 0, count: range.days)
            for (id, entry) in s.users where !entry.user.isGuest {
                if let at = s.createdAt[id], let n = range.index(of: DailyStatsRange.day(of: at)) {
                    created[n] = (created[n] ?? 0) + 1
                }
            }
            var active = [Int64?](repeating: 0, count: range.days)
            for pair in s.activity {
                if let n = range.index(of: pair[0]) { active[n] = (active[n] ?? 0) + 1 }
            }
            return [.newUsers: created, .activeUsers: active]
        }
    }
}
