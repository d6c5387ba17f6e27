// The roles part of the store (table `user_roles`, migration v5-roles): granting and revoking by username for the
// `cairn user grant-ops` / `revoke-ops` commands, which run beside a live hub (WAL lets them write while it
// serves), and the check the hub makes off the loop on each `stats.watch`.
import CairnCore
import Foundation
import GRDB

extension SQLiteStore: RoleStore {
    /// True when the user holds the role.
    public func hasRole(_ role: UserRole, userID: Int64) async throws -> Bool {
        try await pool.read { db in
            try Bool.fetchOne(
                db, sql: "SELECT 1 FROM user_roles WHERE user_id = ? AND role = ?",
                arguments: [userID, role.rawValue]) ?? false
        }
    }

    /// Grants `role` to the account named `username`; false when it already held it. Committed on return.
    @discardableResult
    public func grantRole(_ role: UserRole, username: String, at time: Int64) throws -> Bool {
        try pool.write { db in
            guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM users WHERE username = ?", arguments: [username])
            else {
                throw RoleStoreError.noSuchUser(username)
            }
            try db.execute(
                sql: "INSERT OR IGNORE INTO user_roles (user_id, role, granted_at) VALUES (?, ?, ?)",
                arguments: [id, role.rawValue, time])
            return db.changesCount > 0
        }
    }

    /// Revokes `role` from the account named `username`; false when it did not hold it. Committed on return.
    @discardableResult
    public func revokeRole(_ role: UserRole, username: String) throws -> Bool {
        try pool.write { db in
            guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM users WHERE username = ?", arguments: [username])
            else {
                throw RoleStoreError.noSuchUser(username)
            }
            try db.execute(
                sql: "DELETE FROM user_roles WHERE user_id = ? AND role = ?", arguments: [id, role.rawValue])
            return db.changesCount > 0
        }
    }

    /// The usernames holding `role`, sorted.
    public func usernames(withRole role: UserRole) throws -> [String] {
        try pool.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT u.username FROM user_roles r JOIN users u ON u.id = r.user_id WHERE r.role = ? ORDER BY
                      u.username
                    """, arguments: [role.rawValue])
        }
    }
}
