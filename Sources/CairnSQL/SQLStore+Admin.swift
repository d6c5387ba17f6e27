// The admin part of the store, implementing the domain's `AdminStore`: the user list admins browse, with each
// account's figures counted from the tables that hold them (friends, buckets owned, relics, and PicShare's: pictures
// posted, likes they received, open reports against them), suspensions, and the audit log, to which every admin
// write appends its line in the same transaction. Usernames are compared and ordered bytewise on both engines
// (`SQLDialect.bytewise`), so a page ends at the same name; a prefix matches ignoring (ASCII) case.
public import CairnAdmin
import CairnCore
public import CairnSessions

extension SQLStore {
    /// A page of accounts in username order (keyset on the unique username).
    public func adminUsers(_ query: AdminUserQuery, now: Int64) async throws -> [AdminUserRow] {
        try await database.read { db in
            let dialect = db.dialect
            var conditions: [String] = []
            var arguments: SQLArguments = [now]
            if !query.guests { conditions.append("NOT u.is_guest") }
            if let after = query.after {
                conditions.append("\(dialect.bytewise("u.username")) > ?")
                arguments.append(after)
            }
            if let prefix = query.prefix {
                let pattern = SQLText.escapeLike(prefix) + "%"
                let like = dialect.likeIgnoringCase
                conditions.append(#"(u.username \#(like) ? ESCAPE '\' OR u.email \#(like) ? ESCAPE '\')"#)
                arguments += [pattern, pattern]
            }
            arguments.append(query.limit)
            let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            return try db.rows(
                "\(SQLAdmin.columns) \(filter) ORDER BY \(dialect.bytewise("u.username")) LIMIT ?", arguments
            ).map(SQLAdmin.row)
        }
    }

    /// One account as an admin sees it.
    public func adminUser(id: Int64, now: Int64) async throws -> AdminUserRow? {
        try await database.read { db in
            try db.row("\(SQLAdmin.columns) WHERE u.id = ?", [now, id]).map(SQLAdmin.row)
        }
    }

    /// Stores the suspension (replacing any) and its audit line in one transaction.
    public func suspend(userID: Int64, _ suspension: Suspension, audit: AuditEntry) async throws {
        try await database.write { db in
            try db.execute(
                """
                INSERT INTO suspensions (user_id, reason, since, until, by_id) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (user_id) DO UPDATE SET reason = excluded.reason, since = excluded.since,
                  until = excluded.until, by_id = excluded.by_id
                """, [userID, suspension.reason, suspension.since, suspension.until, audit.admin.id])
            try SQLAdmin.append(audit, db)
        }
    }

    /// Deletes the suspension; when there was one, appends the audit line in the same transaction.
    public func unsuspend(userID: Int64, audit: AuditEntry) async throws -> Bool {
        try await database.write { db in
            guard try db.execute("DELETE FROM suspensions WHERE user_id = ?", [userID]) > 0 else { return false }
            try SQLAdmin.append(audit, db)
            return true
        }
    }

    /// The newest audit lines, newest first.
    public func auditLog(before: Int64?, limit: Int) async throws -> [(id: Int64, entry: AuditEntry)] {
        let rows = try await database.read { db in
            try db.rows(
                """
                SELECT a.id, a.at, a.admin_id, a.admin_name, a.action, a.target_kind, a.target_id, a.target_name,
                  a.reason, a.detail, coalesce(u.name, a.admin_name) AS name, u.is_guest
                FROM admin_audit a LEFT JOIN users u ON u.id = a.admin_id WHERE a.id < ? ORDER BY a.id DESC LIMIT ?
                """, [before ?? Int64.max, limit])
        }
        return rows.map { row in
            let admin = User(
                id: row["admin_id"], username: row["admin_name"], name: row["name"],
                isGuest: row["is_guest"] ?? false)
            return (
                row["id"],
                AuditEntry(
                    at: row["at"], admin: admin, action: row["action"], targetKind: row["target_kind"],
                    targetID: row["target_id"], targetName: row["target_name"], reason: row["reason"],
                    detail: row["detail"])
            )
        }
    }
}

/// The admin rows and the audit log, for every port that writes an audit line.
public enum SQLAdmin {
    /// The columns of one admin row; `?` is `now` (for the suspension in force).
    static let columns = """
        SELECT u.id, u.username, u.name, u.is_guest, u.email, u.created_at, u.last_seen_at,
          EXISTS (SELECT 1 FROM user_roles r WHERE r.user_id = u.id AND r.role = 'admin') AS is_admin,
          s.reason, s.since, s.until,
          (SELECT COUNT(*) FROM friendships f WHERE f.user_a = u.id OR f.user_b = u.id) AS friends,
          (SELECT COUNT(*) FROM bucket_members m WHERE m.user_id = u.id AND m.role = 'owner') AS buckets,
          (SELECT COUNT(*) FROM relics l WHERE l.creator_id = u.id) AS relics,
          (SELECT COUNT(*) FROM pictures p WHERE p.by_id = u.id) AS pictures,
          (SELECT CAST(coalesce(SUM(p.likes), 0) AS BIGINT) FROM pictures p WHERE p.by_id = u.id) AS likes_received,
          (SELECT COUNT(*) FROM picture_reports r JOIN pictures p ON p.id = r.picture_id
            WHERE p.by_id = u.id AND r.state = 'open') AS open_reports
        FROM users u LEFT JOIN suspensions s ON s.user_id = u.id AND (s.until IS NULL OR s.until > ?)
        """

    static func row(_ row: SQLRow) -> AdminUserRow {
        let reason: String? = row["reason"]
        return AdminUserRow(
            user: SQLAccounts.user(row), email: row["email"], createdAt: row["created_at"],
            lastSeenAt: row["last_seen_at"], isAdmin: row["is_admin"],
            suspension: reason.map { Suspension(reason: $0, since: row["since"], until: row["until"]) },
            friends: row["friends"], buckets: row["buckets"], relics: row["relics"], pictures: row["pictures"],
            likesReceived: row["likes_received"], openReports: row["open_reports"])
    }

    /// Appends one audit line inside the caller's transaction.
    public static func append(_ audit: AuditEntry, _ db: any SQLDatabase) throws {
        try db.execute(
            """
            INSERT INTO admin_audit (at, admin_id, admin_name, action, target_kind, target_id, target_name,
              reason, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                audit.at, audit.admin.id, audit.admin.username, audit.action, audit.targetKind, audit.targetID,
                audit.targetName, audit.reason, audit.detail,
            ])
    }
}
