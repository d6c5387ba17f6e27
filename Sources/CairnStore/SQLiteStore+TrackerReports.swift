// The trackers' reports in SQLite: the one part of `TrackerStore` each engine writes its own way (CairnSQL has the
// rest). Reports are group-committed (`GroupCommit`): the reports that arrive together share one transaction and one
// fsync, each applied in arrival order with cached statements (no round trips to save here). Writes are serialized,
// so an unshare committed before a report is seen by its write.
public import CairnCore
import CairnSQL
public import CairnTrackers
import GRDB

extension SQLiteStore: TrackerStore {
    public func recordTrackerIngest(tracker: Int64, fix: Fix?, speedRejections: Int) async throws -> Bool {
        try await trackerReports.submit(
            TrackerReportWrite(tracker: tracker, fix: fix, speedRejections: speedRejections))
    }

    /// One report's write, inside a transaction shared with the reports that arrived with it: the tracker must still
    /// be active and its pairer an owner of its bucket (its own refusal otherwise, the others unaffected); then the
    /// count, and the fix unless older. Writes are serialized, so an unshare committed before is seen here.
    static func applyTrackerReport(_ db: Database, _ write: TrackerReportWrite) throws -> Result<Bool, any Error> {
        try db.cachedStatement(
            sql: """
                UPDATE trackers SET speed_rejections = ?
                WHERE id = ? AND active AND NOT \(SQLTrackers.pairerLeft("trackers"))
                """
        )
        .execute(arguments: [write.speedRejections, write.tracker])
        guard db.changesCount > 0 else { return .failure(TrackerStoreError.notActive) }
        guard let fix = write.fix else { return .success(false) }
        return .success(try upsertTrackerFix(db, tracker: write.tracker, fix: fix))
    }

    /// Stores `fix` as the tracker's latest unless a newer one is stored; true when it became the latest.
    private static func upsertTrackerFix(_ db: Database, tracker: Int64, fix: Fix) throws -> Bool {
        try db.cachedStatement(
            sql: """
                INSERT INTO tracker_positions (tracker_id, lat, lon, acc, alt, spd, hdg, bat, ts)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(tracker_id) DO UPDATE SET lat = excluded.lat, lon = excluded.lon, acc = excluded.acc,
                  alt = excluded.alt, spd = excluded.spd, hdg = excluded.hdg, bat = excluded.bat, ts = excluded.ts
                WHERE excluded.ts >= tracker_positions.ts
                """
        ).execute(arguments: [tracker, fix.lat, fix.lon, fix.acc, fix.alt, fix.spd, fix.hdg, fix.bat, fix.ts])
        return db.changesCount > 0
    }

}

/// What one tracker report writes (`recordTrackerIngest`), queued for a shared commit.
struct TrackerReportWrite: Sendable {
    var tracker: Int64
    var fix: Fix?
    var speedRejections: Int
}
