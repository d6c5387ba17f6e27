// The accounts part of the store: users and session-token digests, implementing the domain's `AccountStore` but for
// the batch insert of fixtures (`createUsers`, each engine's own). A unique violation names its index, which tells a
// taken username from a taken email.
public import CairnCore
public import CairnSessions
import Foundation

extension SQLStore {
    /// Inserts a user; a duplicate username becomes `AccountStoreError.usernameTaken`, a duplicate email
    /// `.emailTaken`.
    public func createUser(_ new: NewUser) async throws -> User {
        do {
            return try await database.write { db in
                let id: Int64 = try db.scalar(
                    """
                    INSERT INTO users (
                      username, name, name_folded, password_hash, is_guest, created_at, last_seen_at, email)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
                    """,
                    [
                        new.username, new.name, SQLText.fold(new.name), new.passwordHash, new.isGuest, new.createdAt,
                        new.createdAt, new.email,
                    ])!
                return User(id: id, username: new.username, name: new.name, isGuest: new.isGuest)
            }
        } catch  where database.isUniqueViolation(error) {
            throw database.isUniqueViolation(error, of: "users.email") ? AccountStoreError.emailTaken : .usernameTaken
        }
    }

    /// Finds a user and their password record by (lower-cased) email.
    public func credentials(email: String) async throws -> StoredCredentials? {
        try await database.read { db in
            try db.row("SELECT id, username, name, is_guest, password_hash FROM users WHERE email = ?", [email])
                .map { StoredCredentials(user: SQLAccounts.user($0), passwordHash: $0["password_hash"]) }
        }
    }

    /// The user's suspension in force at `now`, if any.
    public func suspension(userID: Int64, now: Int64) async throws -> Suspension? {
        try await database.read { db in
            try db.row(
                "SELECT reason, since, until FROM suspensions WHERE user_id = ? AND (until IS NULL OR until > ?)",
                [userID, now]
            ).map { Suspension(reason: $0["reason"], since: $0["since"], until: $0["until"]) }
        }
    }

    /// Finds a user and their password record by username.
    public func credentials(username: String) async throws -> StoredCredentials? {
        try await database.read { db in
            try db.row("SELECT id, username, name, is_guest, password_hash FROM users WHERE username = ?", [username])
                .map { StoredCredentials(user: SQLAccounts.user($0), passwordHash: $0["password_hash"]) }
        }
    }

    /// Stores a token digest for a user.
    public func insertToken(hash: [UInt8], userID: Int64, createdAt: Int64) async throws {
        try await database.write { db in
            try db.execute(
                "INSERT INTO tokens (hash, user_id, created_at) VALUES (?, ?, ?)",
                [Data(hash), userID, createdAt])
        }
    }

    /// The user a token digest belongs to, if the token was created after `issuedAfter` (when given).
    public func user(tokenHash: [UInt8], issuedAfter: Int64?) async throws -> User? {
        try await database.read { db in
            try db.row(
                """
                SELECT u.id, u.username, u.name, u.is_guest FROM tokens t JOIN users u ON u.id = t.user_id
                WHERE t.hash = ? AND t.created_at > ?
                """, [Data(tokenHash), issuedAfter ?? Int64.min]
            ).map(SQLAccounts.user)
        }
    }

    /// Deletes a token digest; true if it existed.
    public func deleteToken(hash: [UInt8]) async throws -> Bool {
        try await database.write { db in
            try db.execute("DELETE FROM tokens WHERE hash = ?", [Data(hash)]) > 0
        }
    }

    /// Deletes every token digest of a user; returns how many there were.
    public func deleteTokens(userID: Int64) async throws -> Int {
        try await database.write { db in try db.execute("DELETE FROM tokens WHERE user_id = ?", [userID]) }
    }

    /// Sets the last activity of these users (never backwards).
    public func markSeen(userIDs: [Int64], at: Int64) async throws {
        guard !userIDs.isEmpty else { return }
        try await database.write { db in
            try db.execute(
                """
                UPDATE users SET last_seen_at = \(db.dialect.greatest("coalesce(last_seen_at, 0)", "?"))
                WHERE \(db.dialect.isAny("id"))
                """,
                [at, SQLIntegers(userIDs)])
        }
    }

    /// Deletes stale guests a batch per transaction. Their rows go with them through the schema's cascades; share
    /// rules naming them as viewer have no foreign key and are deleted here.
    public func purgeGuests(seenBefore cutoff: Int64, sparing: Set<Int64>) async throws -> GuestPurge {
        let batch = 500
        var purge = GuestPurge()
        var after: Int64 = 0
        while true {
            let from = after
            let (found, last, relics, items) = try await database.write { db -> ([Int64], Int64?, [Int64], [Int64]) in
                let candidates = try db.scalars(
                    "SELECT id FROM users WHERE is_guest AND last_seen_at < ? AND id > ? ORDER BY id LIMIT ?",
                    [cutoff, from, batch], as: Int64.self)
                let next = candidates.count < batch ? nil : candidates.last
                let ids = candidates.filter { !sparing.contains($0) }
                guard !ids.isEmpty else { return ([], next, [], []) }
                let list = SQLIntegers(ids)
                let relics = try db.scalars(
                    "SELECT id FROM relics WHERE \(db.dialect.isAny("creator_id")) ORDER BY id", [list], as: Int64.self)
                // Buckets whose every owner goes (the last-owner trigger deletes them, their items with them).
                let items = try db.scalars(
                    """
                    SELECT id FROM items WHERE bucket_id IN (
                      SELECT bucket_id FROM bucket_members WHERE role = 'owner' GROUP BY bucket_id
                      HAVING COUNT(*) = COUNT(*) FILTER (WHERE \(db.dialect.isAny("user_id"))))
                    ORDER BY id
                    """, [list], as: Int64.self)
                try db.execute("DELETE FROM share_rules WHERE \(db.dialect.isAny("viewer_id"))", [list])
                try db.execute("DELETE FROM users WHERE \(db.dialect.isAny("id"))", [list])
                return (ids, next, relics, items)
            }
            purge.users += found
            purge.relics += relics
            purge.items += items
            guard let last else { return purge }
            after = last
        }
    }
}
