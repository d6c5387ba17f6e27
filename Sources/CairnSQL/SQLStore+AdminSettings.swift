// Admins' live settings and the daily figures in the store: overrides by key, written with their audit lines in one
// transaction; each day's count of active accounts, written in batches (`ActivityLog`) where `activity` remembers who
// was already counted (yesterday and today only: that is all a batch can name) so a restart, or another node, does
// not count anyone twice: each day's marks go in one statement, and only the rows it inserted are added to the day's
// count; and the accounts' part of the daily figures (`accountDailyStats`): new users from a range scan of a partial
// index, active users from one row per day.
public import CairnAdmin
import CairnCore

extension SQLStore {
    /// The stored overrides, read synchronously while the hub is assembled.
    public func loadAdminSettingsNow() throws -> [String: String] {
        try database.read { db in try SQLAdminSettings.settings(db) }
    }

    public func adminSettings() async throws -> [String: String] {
        try await database.read { db in try SQLAdminSettings.settings(db) }
    }

    public func saveAdminSettings(set: [String: String], reset: [String], audit: [AuditEntry]) async throws {
        let at = audit.first?.at
        let by = audit.first?.admin.id
        try await database.write { db in
            for (key, value) in set.sorted(by: { $0.key < $1.key }) {
                try db.execute(
                    """
                    INSERT INTO admin_settings (key, value, updated_at, updated_by) VALUES (?, ?, ?, ?)
                    ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at,
                      updated_by = excluded.updated_by
                    """, [key, value, at ?? 0, by])
            }
            if !reset.isEmpty {
                try db.execute("DELETE FROM admin_settings WHERE \(db.dialect.isAny("key", .text))", [SQLTexts(reset)])
            }
            for line in audit { try SQLAdmin.append(line, db) }
        }
    }

    public func recordActivity(_ users: [Int64: [Int64]]) async throws {
        guard let newest = users.keys.max() else { return }
        try await database.write { db in
            for (day, ids) in users.sorted(by: { $0.key < $1.key }) {
                // `WHERE true`: SQLite would otherwise read the ON of ON CONFLICT as a join's.
                let added = try db.execute(
                    """
                    INSERT INTO activity (day, user_id) SELECT CAST(? AS BIGINT), value FROM \(db.dialect.elements())
                    WHERE true ON CONFLICT DO NOTHING
                    """, [day, SQLIntegers(ids)])
                if added > 0 {
                    try db.execute(
                        """
                        INSERT INTO activity_days (day, users) VALUES (?, ?)
                        ON CONFLICT (day) DO UPDATE SET users = activity_days.users + excluded.users
                        """, [day, added])
                }
            }
            // Marks can only name today or yesterday (the day turns on the tick): older ones are done with.
            try db.execute("DELETE FROM activity WHERE day < ?", [newest - 1])
        }
    }

    /// The accounts' daily figures: `new_users` and `active_users`.
    public var accountDailyStats: any DailyStatsProvider { SQLAccountDailyStats(database: database) }
}

enum SQLAdminSettings {
    static func settings(_ db: any SQLDatabase) throws -> [String: String] {
        var settings: [String: String] = [:]
        for row in try db.rows("SELECT key, value FROM admin_settings") {
            settings[row["key"]] = row["value"] as String
        }
        return settings
    }
}

/// New registered accounts per day (by creation time, over `users_created_at`) and active ones (`activity_days`).
struct SQLAccountDailyStats: DailyStatsProvider {
    let database: any SQLTransactions

    var columns: [DailyStatColumn] { [.newUsers, .activeUsers] }

    func dailyStats(_ range: DailyStatsRange) async throws -> [DailyStatColumn: [Int64?]] {
        let (created, active) = try await database.read { db in
            (
                try db.rows(
                    """
                    SELECT created_at / \(DailyStatsRange.dayMs) AS day, COUNT(*) AS n FROM users
                    WHERE created_at >= ? AND created_at < ? AND NOT is_guest GROUP BY 1
                    """, [range.startMs, range.endMs]),
                try db.rows(
                    "SELECT day, users AS n FROM activity_days WHERE day BETWEEN ? AND ?",
                    [range.firstDay, range.lastDay])
            )
        }
        func column(_ rows: [SQLRow]) -> [Int64?] {
            var values = [Int64?](repeating: 0, count: range.days)
            for row in rows {
                if let n = range.index(of: row["day"]) { values[n] = row["n"] as Int64 }
            }
            return values
        }
        return [.newUsers: column(created), .activeUsers: column(active)]
    }
}
