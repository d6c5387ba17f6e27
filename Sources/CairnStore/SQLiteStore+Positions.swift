// Positions in SQLite: the part of `SocialStore` each engine writes its own way (CairnSQL has the rest). A flush is
// one transaction of row-by-row upserts and appends through cached statements (no round trips to save here); the
// history is purged a slice per transaction so the writer is never held long.
import CairnCore
import CairnSQL
public import CairnSocial
import GRDB

extension SQLiteStore: SocialStore {
    /// Writes a batch of positions in one transaction.
    public func flushPositions(_ batch: PositionBatch) async throws {
        guard !batch.isEmpty else { return }
        // A fix of a user deleted meanwhile (a guest purged while a last position was on its way) is skipped, not
        // an error: one missing user must not fail the whole snapshot, and with it every later one.
        // The transaction runs below the loop's priority, its commit included (decision 0036). `pool.write` is this
        // same `inTransaction` inside `writeWithoutTransaction`, but would commit after the closure had returned.
        try await pool.writeWithoutTransaction { db in
            try BackgroundPriority.whileLowered { try db.inTransaction { try Self.write(batch, into: db) } }
        }
    }

    /// The batch's statements, in the caller's transaction.
    private static func write(_ batch: PositionBatch, into db: Database) throws -> Database.TransactionCompletion {
        let upsert = try db.cachedStatement(
            sql: """
                INSERT INTO positions (user_id, lat, lon, acc, alt, spd, hdg, bat, ts, flagged)
                SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10 WHERE EXISTS (SELECT 1 FROM users WHERE id = ?1)
                ON CONFLICT(user_id) DO UPDATE SET lat = excluded.lat, lon = excluded.lon, acc = excluded.acc,
                  alt = excluded.alt, spd = excluded.spd, hdg = excluded.hdg, bat = excluded.bat, ts = excluded.ts,
                  flagged = excluded.flagged
                WHERE excluded.ts >= positions.ts
                """)
        for item in batch.latest {
            try upsert.execute(arguments: Self.arguments(item))
        }
        let append = try db.cachedStatement(
            sql: """
                INSERT INTO position_history (user_id, lat, lon, acc, alt, spd, hdg, bat, ts, flagged)
                SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10 WHERE EXISTS (SELECT 1 FROM users WHERE id = ?1)
                """)
        for item in batch.history {
            try append.execute(arguments: Self.arguments(item))
        }
        return .commit
    }

    /// Deletes history rows with `ts` before `cutoff`, a slice per transaction so the writer is never held long.
    public func purgePositionHistory(before cutoff: Int64) async throws -> Int {
        var total = 0
        while true {
            let deleted = try await pool.write { db -> Int in
                try db.execute(
                    sql: """
                        DELETE FROM position_history WHERE rowid IN
                          (SELECT rowid FROM position_history WHERE ts < ? LIMIT 10000)
                        """, arguments: [cutoff])
                return db.changesCount
            }
            total += deleted
            if deleted < 10000 { return total }
        }
    }

    /// Rows in the position history (tests and diagnostics).
    func positionHistoryCount() throws -> Int {
        try pool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM position_history") ?? 0 }
    }

    static func arguments(_ item: StoredFix) -> StatementArguments {
        let f = item.fix
        return [item.userID, f.lat, f.lon, f.acc, f.alt, f.spd, f.hdg, f.bat, f.ts, f.flagged]
    }
}
