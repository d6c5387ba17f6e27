// Positions in the shared store: the part of `SocialStore` each engine writes its own way (CairnSQL has the rest).
// A flush is one statement whatever its size (the rows go as arrays through `unnest`), so a flush of 100k fixes costs
// one round trip and one commit, not 100k of each; the history is purged a slice per transaction.
import CairnCore
import CairnSQL
public import CairnSocial

extension PostgresStore: SocialStore {
    /// Writes a batch of positions in one statement: the history rows are appended and the latest upserted (never
    /// over a newer fix) through `unnest` of one array per column.
    public func flushPositions(_ batch: PositionBatch) async throws {
        guard !batch.isEmpty else { return }
        let latest = PositionColumns(Self.newestPerUser(batch.latest))
        let history = PositionColumns(batch.history)
        // A fix of a user deleted meanwhile (a guest purged while a last position was on its way) is skipped, not
        // an error: one missing user must not fail the whole snapshot, and with it every later one.
        var arguments = history.arguments
        arguments += latest.arguments
        try await pool.write { [arguments] db in
            try db.execute(
                """
                WITH appended AS (
                  INSERT INTO position_history (user_id, lat, lon, acc, alt, spd, hdg, bat, ts, flagged)
                  SELECT f.* FROM unnest(\(PositionColumns.casts)) AS f(\(PositionColumns.names))
                  WHERE EXISTS (SELECT 1 FROM users u WHERE u.id = f.user_id))
                INSERT INTO positions (user_id, lat, lon, acc, alt, spd, hdg, bat, ts, flagged)
                SELECT f.* FROM unnest(\(PositionColumns.casts)) AS f(\(PositionColumns.names))
                WHERE EXISTS (SELECT 1 FROM users u WHERE u.id = f.user_id)
                ON CONFLICT (user_id) DO UPDATE SET lat = excluded.lat, lon = excluded.lon, acc = excluded.acc,
                  alt = excluded.alt, spd = excluded.spd, hdg = excluded.hdg, bat = excluded.bat, ts = excluded.ts,
                  flagged = excluded.flagged
                WHERE excluded.ts >= positions.ts
                """, arguments)
        }
    }

    /// One fix per user, as the SQLite store's row-by-row upserts would leave it: the last of the newest. (One
    /// statement may not update a row twice; the rows go in user order, so concurrent flushes lock alike.)
    static func newestPerUser(_ fixes: [StoredFix]) -> [StoredFix] {
        var newest: [Int64: StoredFix] = [:]
        for item in fixes {
            if let kept = newest[item.userID], kept.fix.ts > item.fix.ts { continue }
            newest[item.userID] = item
        }
        return newest.values.sorted { $0.userID < $1.userID }
    }

    /// Deletes history rows with `ts` before `cutoff`, a slice per transaction so no transaction is long.
    public func purgePositionHistory(before cutoff: Int64) async throws -> Int {
        var total = 0
        while true {
            let deleted = try await pool.write { db in
                try db.execute(
                    """
                    DELETE FROM position_history WHERE ctid = ANY(ARRAY(
                      SELECT ctid FROM position_history WHERE ts < ? LIMIT 10000))
                    """, [cutoff])
            }
            total += deleted
            if deleted < 10000 { return total }
        }
    }

    /// Rows in the position history (tests and diagnostics).
    func positionHistoryCount() throws -> Int {
        try pool.read { try $0.scalar("SELECT count(*) FROM position_history") ?? 0 }
    }
}

/// Fixes as one array per column, for `unnest`.
struct PositionColumns {
    static let names = "user_id, lat, lon, acc, alt, spd, hdg, bat, ts, flagged"
    static let casts =
        "?::bigint[], ?::float8[], ?::float8[], ?::float8[], ?::float8[], ?::float8[], ?::float8[], ?::float8[], "
        + "?::bigint[], ?::boolean[]"

    let arguments: PostgresArguments

    init(_ fixes: [StoredFix]) {
        func column(_ value: (Fix) -> Double?) -> PostgresArray<Double> { PostgresArray(fixes.map { value($0.fix) }) }
        arguments = [
            PostgresIntArray(fixes.map(\.userID)), column { $0.lat }, column { $0.lon }, column(\.acc),
            column(\.alt), column(\.spd), column(\.hdg), column(\.bat), PostgresIntArray(fixes.map(\.fix.ts)),
            PostgresArray<Bool>(fixes.map(\.fix.flagged)),
        ]
    }
}
