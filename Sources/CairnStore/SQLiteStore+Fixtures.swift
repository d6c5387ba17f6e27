// Bulk loading of generated fixtures (load-test users, their friendships and tokens) in one transaction, bypassing
// the request path: creating thousands of accounts through scrypt would dominate a load test. Not used by the hub.
// The accounts are `FixtureUser`s (CairnSessions, shared with the PostgreSQL store).
import CairnSQL
public import CairnSessions
import Foundation
import GRDB

extension SQLiteStore {
    /// Inserts users (no password: they authenticate by token), one token each, and friendships given as pairs of
    /// indexes into `users`, all in one transaction; returns the new ids in the order of `users`. A username that
    /// exists already aborts everything with `AccountStoreError.usernameTaken`.
    public func insertFixtures(users: [FixtureUser], friendships: [(Int, Int)], createdAt: Int64) async throws
        -> [Int64]
    {
        do {
            return try await pool.write { db in
                let insertUser = try db.cachedStatement(
                    sql:
                        "INSERT INTO users (username, name, name_folded, password_hash, is_guest, created_at) "
                        + "VALUES (?, ?, ?, NULL, 0, ?)"
                )
                let insertToken = try db.cachedStatement(
                    sql: "INSERT INTO tokens (hash, user_id, created_at) VALUES (?, ?, ?)")
                var ids: [Int64] = []
                ids.reserveCapacity(users.count)
                for user in users {
                    try insertUser.execute(arguments: [user.username, user.name, SQLText.fold(user.name), createdAt])
                    let id = db.lastInsertedRowID
                    try insertToken.execute(arguments: [Data(user.tokenHash), id, createdAt])
                    ids.append(id)
                }
                let insertFriendship = try db.cachedStatement(
                    sql: "INSERT OR IGNORE INTO friendships (user_a, user_b, created_at) VALUES (?, ?, ?)")
                for (a, b) in friendships {
                    let x = ids[a]
                    let y = ids[b]
                    try insertFriendship.execute(arguments: [min(x, y), max(x, y), createdAt])
                }
                return ids
            }
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            throw AccountStoreError.usernameTaken
        }
    }
}
