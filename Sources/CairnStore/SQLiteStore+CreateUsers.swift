// Many accounts inserted at once (fixtures and benchmarks) in SQLite: the part of `AccountStore` each engine writes its
// own way (CairnSQL has the rest). One transaction of inserts through a cached statement.
public import CairnCore
import CairnSQL
public import CairnSessions
import GRDB

extension SQLiteStore {
    /// Inserts many users in one transaction (fixtures and benchmarks); a duplicate username aborts the whole batch.
    public func createUsers(_ users: [NewUser]) async throws -> [User] {
        do {
            return try await pool.write { db in
                let insert = try db.cachedStatement(
                    sql: """
                        INSERT INTO users (
                          username, name, name_folded, password_hash, is_guest, created_at, last_seen_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?)
                        """)
                var created: [User] = []
                created.reserveCapacity(users.count)
                for new in users {
                    try insert.execute(arguments: [
                        new.username, new.name, SQLText.fold(new.name), new.passwordHash, new.isGuest, new.createdAt,
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
