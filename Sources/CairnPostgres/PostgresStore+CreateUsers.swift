// Many accounts inserted at once (fixtures and benchmarks) in the shared store: the part of `AccountStore` each engine
// writes its own way (CairnSQL has the rest). One statement over `unnest` arrays, one round trip for the batch.
public import CairnCore
import CairnSQL
public import CairnSessions

extension PostgresStore {
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
                    INSERT INTO users (username, name, name_folded, password_hash, is_guest, created_at, last_seen_at)
                    SELECT u, n, f, p, g, c, c
                    FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::boolean[], ?::bigint[])
                      AS x(u, n, f, p, g, c)
                    RETURNING id, username
                    """,
                    [
                        PostgresTextArray(users.map(\.username)), PostgresTextArray(users.map(\.name)),
                        PostgresTextArray(users.map { SQLText.fold($0.name) }),
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
