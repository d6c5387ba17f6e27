// The accounts part of the shared store: users and session-token digests, implementing the domain's `AccountStore`
// as the SQLite store does; unique violations name their constraint, which tells a taken username from a taken email.
import CairnCore
import CairnSessions
import Foundation

extension PostgresStore: AccountStore {
    /// Inserts a user; a duplicate username becomes `AccountStoreError.usernameTaken`, a duplicate email
    /// `.emailTaken`.
    public func createUser(_ new: NewUser) async throws -> User {
        do {
            return try await pool.write { db in
                let id: Int64 = try db.scalar(
                    """
                    INSERT INTO users (username, name, password_hash, is_guest, created_at, last_seen_at, email)
                    VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id
                    """,
                    [
                        new.username, new.name, new.passwordHash, new.isGuest, new.createdAt, new.createdAt,
                        new.email,
                    ])!
                return User(id: id, username: new.username, name: new.name, isGuest: new.isGuest)
            }
        } catch let error as PostgresError where error.isUniqueViolation() {
            throw error.isUniqueViolation("users_email") ? AccountStoreError.emailTaken : .usernameTaken
        }
    }

    /// Finds a user and their password record by (lower-cased) email.
    public func credentials(email: String) async throws -> StoredCredentials? {
        try await pool.read { db in
            try db.row("SELECT id, username, name, is_guest, password_hash FROM users WHERE email = ?", [email])
                .map { StoredCredentials(user: Self.user($0), passwordHash: $0["password_hash"]) }
        }
    }

    /// The user's suspension in force at `now`, if any.
    public func suspension(userID: Int64, now: Int64) async throws -> Suspension? {
        try await pool.read { db in
            try db.row(
                "SELECT reason, since, until FROM suspensions WHERE user_id = ? AND (until IS NULL OR until > ?)",
                [userID, now]
            ).map { Suspension(reason: $0["reason"], since: $0["since"], until: $0["until"]) }
        }
    }

    /// Finds a user and their password record by username.
    public func credentials(username: String) async throws -> StoredCredentials? {
        try await pool.read { db in
            try db.row("SELECT id, username, name, is_guest, password_hash FROM users WHERE username = ?", [username])
                .map { StoredCredentials(user: Self.user($0), passwordHash: $0["password_hash"]) }
        }
    }

    /// Stores a token digest for a user.
    public func insertToken(hash: [UInt8], userID: Int64, createdAt: Int64) async throws {
        try await pool.write { db in
            try db.execute(
                "INSERT INTO tokens (hash, user_id, created_at) VALUES (?, ?, ?)",
                [PostgresBytes(hash), userID, createdAt])
        }
    }

    /// The user a token digest belongs to, if the token was created after `issuedAfter` (when given).
    public func user(tokenHash: [UInt8], issuedAfter: Int64?) async throws -> User? {
        try await pool.read { db in
            try db.row(
                """
                SELECT u.id, u.username, u.name, u.is_guest FROM tokens t JOIN users u ON u.id = t.user_id
                WHERE t.hash = ? AND t.created_at > ?
                """, [PostgresBytes(tokenHash), issuedAfter ?? Int64.min]
            ).map(Self.user)
        }
    }

    /// Deletes a token digest; true if it existed.
    public func deleteToken(hash: [UInt8]) async throws -> Bool {
        try await pool.write { db in
            try db.execute("DELETE FROM tokens WHERE hash = ?", [PostgresBytes(hash)]) > 0
        }
    }

    /// Deletes every token digest of a user; returns how many there were.
    public func deleteTokens(userID: Int64) async throws -> Int {
        try await pool.write { db in try db.execute("DELETE FROM tokens WHERE user_id = ?", [userID]) }
    }

    /// Sets the last activity of these users (never backwards).
    public func markSeen(userIDs: [Int64], at: Int64) async throws {
        guard !userIDs.isEmpty else { return }
        try await pool.write { db in
            try db.execute(
                "UPDATE users SET last_seen_at = greatest(coalesce(last_seen_at, 0), ?) WHERE id = ANY(?::bigint[])",
                [at, PostgresIntArray(userIDs)])
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
            let (found, last, relics, items) = try await pool.write { db -> ([Int64], Int64?, [Int64], [Int64]) in
                let candidates = try db.scalars(
                    "SELECT id FROM users WHERE is_guest AND last_seen_at < ? AND id > ? ORDER BY id LIMIT ?",
                    [cutoff, from, batch], as: Int64.self)
                let next = candidates.count < batch ? nil : candidates.last
                let ids = candidates.filter { !sparing.contains($0) }
                guard !ids.isEmpty else { return ([], next, [], []) }
                let list = PostgresIntArray(ids)
                let relics = try db.scalars(
                    "SELECT id FROM relics WHERE creator_id = ANY(?::bigint[]) ORDER BY id", [list], as: Int64.self)
                // Buckets whose every owner goes (the last-owner trigger deletes them, their items with them).
                let items = try db.scalars(
                    """
                    SELECT id FROM items WHERE bucket_id IN (
                      SELECT bucket_id FROM bucket_members WHERE role = 'owner' GROUP BY bucket_id
                      HAVING COUNT(*) = COUNT(*) FILTER (WHERE user_id = ANY(?::bigint[])))
                    ORDER BY id
                    """, [list], as: Int64.self)
                try db.execute("DELETE FROM share_rules WHERE viewer_id = ANY(?::bigint[])", [list])
                try db.execute("DELETE FROM users WHERE id = ANY(?::bigint[])", [list])
                return (ids, next, relics, items)
            }
            purge.users += found
            purge.relics += relics
            purge.items += items
            guard let last else { return purge }
            after = last
        }
    }

    /// Inserts many users in one transaction (fixtures and benchmarks), in one statement over `unnest` arrays; a
    /// duplicate username aborts the whole batch.
    public func createUsers(_ users: [NewUser]) async throws -> [User] {
        guard !users.isEmpty else { return [] }
        do {
            return try await pool.write { db in
                var idOf: [String: Int64] = [:]
                idOf.reserveCapacity(users.count)
                for row in try db.rows(
                    """
                    INSERT INTO users (username, name, password_hash, is_guest, created_at, last_seen_at)
                    SELECT u, n, p, g, c, c FROM unnest(?::text[], ?::text[], ?::text[], ?::boolean[], ?::bigint[])
                      AS x(u, n, p, g, c)
                    RETURNING id, username
                    """,
                    [
                        PostgresTextArray(users.map(\.username)), PostgresTextArray(users.map(\.name)),
                        PostgresArray<String>(users.map(\.passwordHash)), PostgresArray<Bool>(users.map(\.isGuest)),
                        PostgresIntArray(users.map(\.createdAt)),
                    ])
                {
                    idOf[row["username"]] = row["id"] as Int64
                }
                return users.map {
                    User(id: idOf[$0.username]!, username: $0.username, name: $0.name, isGuest: $0.isGuest)
                }
            }
        } catch let error as PostgresError where error.isUniqueViolation() {
            throw AccountStoreError.usernameTaken
        }
    }

    static func user(_ row: PostgresRow) -> User {
        User(id: row["id"], username: row["username"], name: row["name"], isGuest: row["is_guest"])
    }
}
