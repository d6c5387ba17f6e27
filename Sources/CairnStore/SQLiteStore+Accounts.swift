// The accounts part of the store: users and session-token digests, implementing the domain's `AccountStore`.
import CairnCore
import CairnSessions
import Foundation
import GRDB

extension SQLiteStore: AccountStore {
    /// Inserts a user; a duplicate username becomes `AccountStoreError.usernameTaken`, a duplicate email
    /// `.emailTaken`.
    public func createUser(_ new: NewUser) async throws -> User {
        do {
            return try await pool.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO users (username, name, password_hash, is_guest, created_at, last_seen_at, email)
                        VALUES (?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        new.username, new.name, new.passwordHash, new.isGuest, new.createdAt, new.createdAt,
                        new.email,
                    ])
                return User(id: db.lastInsertedRowID, username: new.username, name: new.name, isGuest: new.isGuest)
            }
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            throw (error.message ?? "").contains("users.email")
                ? AccountStoreError.emailTaken : AccountStoreError.usernameTaken
        }
    }

    /// Finds a user and their password record by (lower-cased) email.
    public func credentials(email: String) async throws -> StoredCredentials? {
        try await pool.read { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT id, username, name, is_guest, password_hash FROM users WHERE email = ?",
                    arguments: [email])
            else { return nil }
            return StoredCredentials(user: Self.user(row), passwordHash: row["password_hash"])
        }
    }

    /// The user's suspension in force at `now`, if any.
    public func suspension(userID: Int64, now: Int64) async throws -> Suspension? {
        try await pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT reason, since, until FROM suspensions WHERE user_id = ? AND (until IS NULL OR until > ?)
                    """,
                arguments: [userID, now]
            ).map { Suspension(reason: $0["reason"], since: $0["since"], until: $0["until"]) }
        }
    }

    /// Finds a user and their password record by username.
    public func credentials(username: String) async throws -> StoredCredentials? {
        try await pool.read { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT id, username, name, is_guest, password_hash FROM users WHERE username = ?",
                    arguments: [username])
            else { return nil }
            return StoredCredentials(user: Self.user(row), passwordHash: row["password_hash"])
        }
    }

    /// Stores a token digest for a user.
    public func insertToken(hash: [UInt8], userID: Int64, createdAt: Int64) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO tokens (hash, user_id, created_at) VALUES (?, ?, ?)",
                arguments: [Data(hash), userID, createdAt])
        }
    }

    /// The user a token digest belongs to, if the token was created after `issuedAfter` (when given).
    public func user(tokenHash: [UInt8], issuedAfter: Int64?) async throws -> User? {
        try await pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT u.id, u.username, u.name, u.is_guest FROM tokens t JOIN users u ON u.id = t.user_id
                    WHERE t.hash = ? AND t.created_at > ?
                    """, arguments: [Data(tokenHash), issuedAfter ?? Int64.min]
            ).map(Self.user)
        }
    }

    /// Deletes a token digest; true if it existed.
    public func deleteToken(hash: [UInt8]) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM tokens WHERE hash = ?", arguments: [Data(hash)])
            return db.changesCount > 0
        }
    }

    /// Deletes every token digest of a user; returns how many there were.
    public func deleteTokens(userID: Int64) async throws -> Int {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM tokens WHERE user_id = ?", arguments: [userID])
            return db.changesCount
        }
    }

    /// Sets the last activity of these users.
    public func markSeen(userIDs: [Int64], at: Int64) async throws {
        guard !userIDs.isEmpty else { return }
        try await pool.write { db in
            let update = try db.cachedStatement(
                sql: "UPDATE users SET last_seen_at = max(coalesce(last_seen_at, 0), ?) WHERE id = ?")
            for id in userIDs { try update.execute(arguments: [at, id]) }
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
                let candidates = try Int64.fetchAll(
                    db,
                    sql: """
                        SELECT id FROM users WHERE is_guest AND last_seen_at < ? AND id > ? ORDER BY id LIMIT ?
                        """, arguments: [cutoff, from, batch])
                let next = candidates.count < batch ? nil : candidates.last
                let ids = candidates.filter { !sparing.contains($0) }
                guard !ids.isEmpty else { return ([], next, [], []) }
                let list = Array(repeating: "?", count: ids.count).joined(separator: ",")
                let arguments = StatementArguments(ids)
                let relics = try Int64.fetchAll(
                    db, sql: "SELECT id FROM relics WHERE creator_id IN (\(list))",
                    arguments: arguments)
                // Buckets whose every owner goes (the last-owner trigger deletes them, their items with them).
                let items = try Int64.fetchAll(
                    db,
                    sql: """
                        SELECT id FROM items WHERE bucket_id IN (
                          SELECT bucket_id FROM bucket_members WHERE role = 'owner' GROUP BY bucket_id
                          HAVING COUNT(*) = SUM(user_id IN (\(list))))
                        ORDER BY id
                        """, arguments: arguments)
                try db.execute(sql: "DELETE FROM share_rules WHERE viewer_id IN (\(list))", arguments: arguments)
                try db.execute(sql: "DELETE FROM users WHERE id IN (\(list))", arguments: arguments)
                return (ids, next, relics, items)
            }
            purge.users += found
            purge.relics += relics
            purge.items += items
            guard let last else { return purge }
            after = last
        }
    }

    /// Inserts many users in one transaction (fixtures and benchmarks); a duplicate username aborts the whole batch.
    public func createUsers(_ users: [NewUser]) async throws -> [User] {
        do {
            return try await pool.write { db in
                let insert = try db.cachedStatement(
                    sql: """
                        INSERT INTO users (username, name, password_hash, is_guest, created_at, last_seen_at)
                        VALUES (?, ?, ?, ?, ?, ?)
                        """)
                var created: [User] = []
                created.reserveCapacity(users.count)
                for new in users {
                    try insert.execute(arguments: [
                        new.username, new.name, new.passwordHash, new.isGuest, new.createdAt,
                        new.createdAt,
                    ])
                    created.append(
                        User(id: db.lastInsertedRowID, username: new.username, name: new.name, isGuest: new.isGuest))
                }
                return created
            }
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            throw AccountStoreError.usernameTaken
        }
    }

    static func user(_ row: Row) -> User {
        User(id: row["id"], username: row["username"], name: row["name"], isGuest: row["is_guest"])
    }
}
