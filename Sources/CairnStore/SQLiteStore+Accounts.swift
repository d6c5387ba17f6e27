// The accounts part of the store: users and session-token digests, implementing the domain's `AccountStore`.
import CairnDomain
import Foundation
import GRDB

extension SQLiteStore: AccountStore {
    /// Inserts a user; a duplicate username becomes `AccountStoreError.usernameTaken`.
    public func createUser(_ new: NewUser) async throws -> User {
        do {
            return try await pool.write { db in
                try db.execute(
                    sql: "INSERT INTO users (username, name, password_hash, is_guest, created_at) VALUES (?, ?, ?, ?, ?)",
                    arguments: [new.username, new.name, new.passwordHash, new.isGuest, new.createdAt])
                return User(id: db.lastInsertedRowID, username: new.username, name: new.name, isGuest: new.isGuest)
            }
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            throw AccountStoreError.usernameTaken
        }
    }

    /// Finds a user and their password record by username.
    public func credentials(username: String) async throws -> StoredCredentials? {
        try await pool.read { db in
            guard let row = try Row.fetchOne(
                db, sql: "SELECT id, username, name, is_guest, password_hash FROM users WHERE username = ?",
                arguments: [username]) else { return nil }
            return StoredCredentials(user: Self.user(row), passwordHash: row["password_hash"])
        }
    }

    /// Stores a token digest for a user.
    public func insertToken(hash: [UInt8], userID: Int64, createdAt: Int64) async throws {
        try await pool.write { db in
            try db.execute(sql: "INSERT INTO tokens (hash, user_id, created_at) VALUES (?, ?, ?)",
                           arguments: [Data(hash), userID, createdAt])
        }
    }

    /// The user a token digest belongs to, if the token was created after `issuedAfter` (when given).
    public func user(tokenHash: [UInt8], issuedAfter: Int64?) async throws -> User? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: """
                SELECT u.id, u.username, u.name, u.is_guest FROM tokens t JOIN users u ON u.id = t.user_id
                WHERE t.hash = ? AND t.created_at > ?
                """, arguments: [Data(tokenHash), issuedAfter ?? Int64.min]).map(Self.user)
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

    /// Inserts many users in one transaction (fixtures and benchmarks); a duplicate username aborts the whole batch.
    public func createUsers(_ users: [NewUser]) async throws -> [User] {
        do {
            return try await pool.write { db in
                let insert = try db.cachedStatement(
                    sql: "INSERT INTO users (username, name, password_hash, is_guest, created_at) VALUES (?, ?, ?, ?, ?)")
                var created: [User] = []
                created.reserveCapacity(users.count)
                for new in users {
                    try insert.execute(arguments: [new.username, new.name, new.passwordHash, new.isGuest, new.createdAt])
                    created.append(User(id: db.lastInsertedRowID, username: new.username, name: new.name, isGuest: new.isGuest))
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
