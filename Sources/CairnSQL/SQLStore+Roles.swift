// Roles, implementing the domain's `RoleStore` (table `user_roles`): granting and revoking by username for the
// `cairn user grant-ops` / `revoke-ops` (and `-admin`) commands, which may run beside a live hub (SQLite's WAL lets
// them write while it serves) or live nodes, and the check the hub makes off the loop each time a role matters.
public import CairnCore

extension SQLStore {
    /// True when the user holds the role.
    public func hasRole(_ role: UserRole, userID: Int64) async throws -> Bool {
        try await database.read { db in
            try db.scalar(
                "SELECT EXISTS(SELECT 1 FROM user_roles WHERE user_id = ? AND role = ?)", [userID, role.rawValue])
                ?? false
        }
    }

    /// Grants `role` to the account named `username`; false when it already held it. Committed on return.
    @discardableResult
    public func grantRole(_ role: UserRole, username: String, at time: Int64) throws -> Bool {
        try database.write { db in
            let id = try SQLRoles.userID(db, username: username)
            return try db.execute(
                "INSERT INTO user_roles (user_id, role, granted_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                [id, role.rawValue, time]) > 0
        }
    }

    /// Revokes `role` from the account named `username`; false when it did not hold it. Committed on return.
    @discardableResult
    public func revokeRole(_ role: UserRole, username: String) throws -> Bool {
        try database.write { db in
            let id = try SQLRoles.userID(db, username: username)
            return try db.execute("DELETE FROM user_roles WHERE user_id = ? AND role = ?", [id, role.rawValue]) > 0
        }
    }

    /// The usernames holding `role`, sorted bytewise.
    public func usernames(withRole role: UserRole) throws -> [String] {
        try database.read { db in
            try db.scalars(
                """
                SELECT u.username FROM user_roles r JOIN users u ON u.id = r.user_id WHERE r.role = ?
                ORDER BY \(db.dialect.bytewise("u.username"))
                """, [role.rawValue], as: String.self)
        }
    }
}

enum SQLRoles {
    static func userID(_ db: any SQLDatabase, username: String) throws -> Int64 {
        guard let id = try db.scalar("SELECT id FROM users WHERE username = ?", [username], as: Int64.self) else {
            throw RoleStoreError.noSuchUser(username)
        }
        return id
    }
}
