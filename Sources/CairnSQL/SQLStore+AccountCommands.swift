// What the operator's account commands (`cairn user set-password`, `cairn user delete`) need beyond the domain's
// ports: replacing a password record, and deleting one account with everything that hangs off it.

extension SQLStore {
    /// Replaces the password record of the (non-guest) account `userID` and deletes its tokens, in one transaction,
    /// so every device signs in again; answers how many tokens went, or nil when there is no such account.
    public func setPassword(userID: Int64, hash: String) async throws -> Int? {
        try await database.write { db in
            let changed = try db.execute(
                "UPDATE users SET password_hash = ? WHERE id = ? AND NOT is_guest", [hash, userID])
            guard changed > 0 else { return nil }
            return try db.execute("DELETE FROM tokens WHERE user_id = ?", [userID])
        }
    }

    /// Deletes the account `userID` in one transaction, as the guest purge deletes guests: its rows go through the
    /// schema's cascades (tokens, friendships and requests, relics, memberships, buckets it alone owned with their
    /// items, pictures, messages, suspension), and share rules naming it as viewer here. False when there was none.
    public func deleteAccount(userID: Int64) async throws -> Bool {
        try await database.write { db in
            try db.execute("DELETE FROM share_rules WHERE viewer_id = ?", [userID])
            return try db.execute("DELETE FROM users WHERE id = ?", [userID]) > 0
        }
    }
}
