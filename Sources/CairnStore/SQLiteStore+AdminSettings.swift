// Admins' live settings and the daily figures in the store (migration v20-admin-settings): overrides by key, written
// with their audit lines in one transaction; each day's count of active accounts, written in batches (`ActivityLog`),
// where `activity` remembers who was already counted (yesterday and today only: that is all a batch can name) so a
// restart does not count anyone twice; and the accounts' part of the daily figures (`accountDailyStats`): new users
// from a range scan of a covering partial index, active users from one row per day.
import CairnAdmin
import GRDB

extension SQLiteStore: AdminSettingsStore, ActivityStore {
    /// The stored overrides, read synchronously while the hub is assembled.
    public func loadAdminSettingsNow() throws -> [String: String] {
        try pool.read { db in try Self.settings(db) }
    }

    public func adminSettings() async throws -> [String: String] {
        try await pool.read { db in try Self.settings(db) }
    }

    private static func settings(_ db: Database) throws -> [String: String] {
        var settings: [String: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT key, value FROM admin_settings") {
            settings[row["key"]] = row["value"]
        }
        return settings
    }

    public func saveAdminSettings(set: [String: String], reset: [String], audit: [AuditEntry]) async throws {
        let at = audit.first?.at
        let by = audit.first?.admin.id
        try await pool.write { db in
            for (key, value) in set.sorted(by: { $0.key < $1.key }) {
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO admin_settings (key, value, updated_at, updated_by) VALUES (?, ?, ?, ?)
                        """, arguments: [key, value, at ?? 0, by])
            }
            for key in reset {
                try db.execute(sql: "DELETE FROM admin_settings WHERE key = ?", arguments: [key])
            }
            for line in audit { try Self.append(line, db) }
        }
    }

    public func recordActivity(_ users: [Int64: [Int64]]) async throws {
        guard let newest = users.keys.max() else { return }
        try await pool.write { db in
            let mark = try db.cachedStatement(sql: "INSERT OR IGNORE INTO activity (day, user_id) VALUES (?, ?)")
            let count = try db.cachedStatement(
                sql: """
                    INSERT INTO activity_days (day, users) VALUES (?, ?)
                    ON CONFLICT (day) DO UPDATE SET users = users + excluded.users
                    """)
            for (day, ids) in users.sorted(by: { $0.key < $1.key }) {
                var added = 0
                for id in ids {
                    try mark.execute(arguments: [day, id])
                    added += db.changesCount
                }
                if added > 0 { try count.execute(arguments: [day, added]) }
            }
            // Marks can only name today or yesterday (the day turns on the tick): older ones are done with.
            try db.execute(sql: "DELETE FROM activity WHERE day < ?", arguments: [newest - 1])
        }
    }

    /// The accounts' daily figures: `new_users` and `active_users`.
    public var accountDailyStats: any DailyStatsProvider { AccountDailyStats(pool: pool) }
}

/// New registered accounts per day (by creation time, over `users_created_at`) and active ones (`activity_days`).
struct AccountDailyStats: DailyStatsProvider {
    let pool: DatabasePool

    var columns: [DailyStatColumn] { [.newUsers, .activeUsers] }

    func dailyStats(_ range: DailyStatsRange) async throws -> [DailyStatColumn: [Int64?]] {
        try await pool.read { db in
            var created = [Int64?](repeating: 0, count: range.days)
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT created_at / \(DailyStatsRange.dayMs) AS day, COUNT(*) AS n FROM users
                    WHERE created_at >= ? AND created_at < ? AND NOT is_guest GROUP BY day
                    """, arguments: [range.startMs, range.endMs])
            {
                if let n = range.index(of: row["day"]) { created[n] = row["n"] }
            }
            var active = [Int64?](repeating: 0, count: range.days)
            for row in try Row.fetchAll(
                db, sql: "SELECT day, users AS n FROM activity_days WHERE day BETWEEN ? AND ?",
                arguments: [range.firstDay, range.lastDay])
            {
                if let n = range.index(of: row["day"]) { active[n] = row["n"] }
            }
            return [.newUsers: created, .activeUsers: active]
        }
    }
}
