// Bulk loading of generated fixtures (load-test users, their friendships and tokens) in one transaction, bypassing
// the request path: creating thousands of accounts through scrypt would dominate a load test. Not used by the hub.
// Each table is filled by one statement over `unnest` arrays, so a seed of any size is three round trips.
import CairnSQL
public import CairnSessions
import Foundation

extension PostgresStore {
    /// Inserts users (no password: they authenticate by token), one token each, and friendships given as pairs of
    /// indexes into `users`, all in one transaction; returns the new ids in the order of `users`. A username that
    /// exists already (or twice in `users`) aborts everything with `AccountStoreError.usernameTaken`.
    public func insertFixtures(users: [FixtureUser], friendships: [(Int, Int)], createdAt: Int64) async throws
        -> [Int64]
    {
        guard !users.isEmpty else { return [] }
        let pairs = friendships.map { [$0.0, $0.1] }
        do {
            return try await pool.write { db in
                var idOf: [String: Int64] = [:]
                idOf.reserveCapacity(users.count)
                for row in try db.rows(
                    """
                    INSERT INTO users (username, name, name_folded, password_hash, is_guest, created_at)
                    SELECT u, n, f, NULL, false, ?::bigint FROM unnest(?::text[], ?::text[], ?::text[]) AS x(u, n, f)
                    RETURNING id, username
                    """,
                    [
                        createdAt, PostgresTextArray(users.map(\.username)), PostgresTextArray(users.map(\.name)),
                        PostgresTextArray(users.map { SQLText.fold($0.name) }),
                    ])
                {
                    idOf[row["username"]] = row["id"] as Int64
                }
                let ids = users.map { idOf[$0.username]! }
                try db.execute(
                    """
                    INSERT INTO tokens (hash, user_id, created_at)
                    SELECT h, i, ?::bigint FROM unnest(?::bytea[], ?::bigint[]) AS x(h, i)
                    """,
                    [
                        createdAt, PostgresArray<PostgresBytes>(users.map { PostgresBytes($0.tokenHash) }),
                        PostgresIntArray(ids),
                    ])
                if !pairs.isEmpty {
                    let low = pairs.map { min(ids[$0[0]], ids[$0[1]]) }
                    let high = pairs.map { max(ids[$0[0]], ids[$0[1]]) }
                    try db.execute(
                        """
                        INSERT INTO friendships (user_a, user_b, created_at)
                        SELECT a, b, ?::bigint FROM unnest(?::bigint[], ?::bigint[]) AS x(a, b) ON CONFLICT DO NOTHING
                        """, [createdAt, PostgresIntArray(low), PostgresIntArray(high)])
                }
                return ids
            }
        } catch let error as PostgresError where error.isUniqueViolation() {
            throw AccountStoreError.usernameTaken
        }
    }
}
