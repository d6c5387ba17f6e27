// Trackers in SQLite, implementing the domain's `TrackerStore`. The unique device id and the one tracker per item are
// the table's unique constraints (migration v11), so racing pairings settle in the database; a tracker goes with its
// item (the foreign key cascades). Only the digest of a key is stored, unique and indexed (v13) so Overland's
// key-only requests find their tracker. Who paired a tracker (v22) is checked against the bucket's owners in every read
// of the tracker and in the ingest's write, so an unshare committed refuses the next report, whichever connection
// reads it.
import CairnCore
import CairnTrackers
import Foundation
import GRDB

extension SQLiteStore: TrackerStore {
    /// True (1) when tracker `t` was paired by someone who is no longer an owner of its item's bucket (never for a
    /// tracker whose pairer was not recorded). Two primary-key look-ups.
    static func pairerLeft(_ t: String) -> String {
        """
        (\(t).paired_by IS NOT NULL AND NOT EXISTS (
          SELECT 1 FROM items pi JOIN bucket_members pm ON pm.bucket_id = pi.bucket_id
          WHERE pi.id = \(t).item_id AND pm.user_id = \(t).paired_by AND pm.role = 'owner'))
        """
    }

    /// A tracker's columns, from `trackers t`.
    private static let trackerColumns =
        "t.id, t.device, t.item_id, t.active, t.created_at, t.key_hash, t.shows_items, t.paired_by, "
        + "\(pairerLeft("t")) AS pairer_left"

    /// The tracker `id`, read in `db`.
    private static func tracker(_ db: Database, id: Int64) throws -> TrackerRecord? {
        try Row.fetchOne(db, sql: "SELECT \(trackerColumns) FROM trackers t WHERE t.id = ?", arguments: [id])
            .map(tracker)
    }

    public func pairTracker(
        item: Int64, device: String, keyDigest: [UInt8], by pairer: Int64?, at: Int64
    ) async throws -> TrackerRecord {
        do {
            return try await pool.write { db in
                guard
                    try Bool.fetchOne(db, sql: "SELECT EXISTS(SELECT 1 FROM items WHERE id = ?)", arguments: [item])
                        ?? false
                else { throw TrackerStoreError.itemNotFound }
                if try Bool.fetchOne(
                    db, sql: "SELECT EXISTS(SELECT 1 FROM trackers WHERE item_id = ?)", arguments: [item]) ?? false
                {
                    throw TrackerStoreError.itemTaken
                }
                try db.execute(
                    sql: """
                        INSERT INTO trackers (device, item_id, key_hash, active, created_at, paired_by)
                        VALUES (?, ?, ?, 0, ?, ?)
                        """,
                    arguments: [device, item, Data(keyDigest), at, pairer])
                guard let paired = try Self.tracker(db, id: db.lastInsertedRowID) else {
                    throw TrackerStoreError.itemNotFound
                }
                return paired
            }
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            throw TrackerStoreError.deviceTaken
        }
    }

    public func tracker(id: Int64) async throws -> TrackerRecord? {
        try await pool.read { db in try Self.tracker(db, id: id) }
    }

    public func tracker(device: String) async throws -> (record: TrackerRecord, keyDigest: [UInt8])? {
        try await pool.read { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT \(Self.trackerColumns) FROM trackers t WHERE t.device = ?", arguments: [device])
            else { return nil }
            let digest: Data = row["key_hash"]
            return (Self.tracker(row), [UInt8](digest))
        }
    }

    public func tracker(keyDigest: [UInt8]) async throws -> TrackerRecord? {
        try await pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT \(Self.trackerColumns) FROM trackers t WHERE t.key_hash = ?",
                arguments: [Data(keyDigest)]
            ).map(Self.tracker)
        }
    }

    public func bucketMates(ofTracker tracker: Int64) async throws -> [BucketMate] {
        // The one query that decides what an OwnTracks device is shown: items of the same bucket only, and of those
        // not the hidden ones (a hidden item's position is for the bucket's owners, and a tracker is not an owner);
        // nothing unless the asking tracker is active, shown items, and paired by an owner of the bucket now.
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT i.id, i.name, p.lat, p.lon, p.acc, p.alt, p.spd, p.hdg, p.bat, p.ts
                    FROM trackers me JOIN items mine ON mine.id = me.item_id
                    JOIN items i ON i.bucket_id = mine.bucket_id AND i.id != mine.id AND NOT i.hidden
                    JOIN trackers t ON t.item_id = i.id JOIN tracker_positions p ON p.tracker_id = t.id
                    WHERE me.id = ? AND me.active AND me.shows_items AND NOT \(Self.pairerLeft("me"))
                    ORDER BY i.id
                    """,
                arguments: [tracker]
            ).map { row in
                BucketMate(
                    item: row["id"], name: row["name"],
                    fix: Self.trackerPosition(row))
            }
        }
    }

    public func trackers(bucket: Int64) async throws -> [TrackerRecord] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.trackerColumns) FROM items i JOIN trackers t ON t.item_id = i.id
                    WHERE i.bucket_id = ? ORDER BY t.id
                    """, arguments: [bucket]
            ).map(Self.tracker)
        }
    }

    public func setTrackerShowsItems(id: Int64, shows: Bool) async throws -> TrackerRecord? {
        try await pool.write { db in
            try db.execute(sql: "UPDATE trackers SET shows_items = ? WHERE id = ?", arguments: [shows, id])
            return try Self.tracker(db, id: id)
        }
    }

    public func setTrackerActive(id: Int64, active: Bool) async throws -> TrackerRecord? {
        try await pool.write { db in
            try db.execute(sql: "UPDATE trackers SET active = ? WHERE id = ?", arguments: [active, id])
            return try Self.tracker(db, id: id)
        }
    }

    public func unpairTracker(id: Int64) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM trackers WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    public func recordTrackerFix(tracker: Int64, fix: Fix) async throws -> Bool {
        try await pool.write { db in try Self.upsertTrackerFix(db, tracker: tracker, fix: fix) }
    }

    public func trackerFix(tracker: Int64) async throws -> Fix? {
        try await pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT lat, lon, acc, alt, spd, hdg, bat, ts FROM tracker_positions WHERE tracker_id = ?",
                arguments: [tracker]
            ).map { row in
                Self.trackerPosition(row)
            }
        }
    }

    /// True (1) when no owner of the bucket of the item `t.item_id` is free of a suspension in force at `?` (now).
    /// Owners are found by the bucket's primary key, suspensions by theirs: a few index lookups.
    private static let ownersSuspendedColumn = """
        NOT EXISTS (
          SELECT 1 FROM items i JOIN bucket_members m ON m.bucket_id = i.bucket_id AND m.role = 'owner'
          WHERE i.id = t.item_id AND NOT EXISTS (
            SELECT 1 FROM suspensions s WHERE s.user_id = m.user_id AND (s.until IS NULL OR s.until > ?)))
        """

    public func trackerIngestState(keyDigest: [UInt8], now: Int64) async throws -> TrackerIngestState? {
        try await pool.read { db in
            // Every report reads this: the statement is prepared once per connection (cached), not per call.
            let statement = try db.cachedStatement(
                sql: """
                    SELECT \(Self.trackerColumns), t.speed_rejections,
                      p.lat, p.lon, p.acc, p.alt, p.spd, p.hdg, p.bat, p.ts,
                      \(Self.ownersSuspendedColumn) AS owners_suspended
                    FROM trackers t LEFT JOIN tracker_positions p ON p.tracker_id = t.id
                    WHERE t.key_hash = ?
                    """)
            guard let row = try Row.fetchOne(statement, arguments: [now, Data(keyDigest)]) else { return nil }
            let digest: Data = row["key_hash"]
            let ts: Int64? = row["ts"]
            let latest = ts.map { ts in
                Self.trackerPosition(row, ts: ts)
            }
            return TrackerIngestState(
                record: Self.tracker(row), keyDigest: [UInt8](digest), latest: latest,
                speedRejections: row["speed_rejections"], ownersSuspended: row["owners_suspended"])
        }
    }

    public func trackerOwnersSuspended(item: Int64, now: Int64) async throws -> Bool {
        try await pool.read { db in
            try Bool.fetchOne(
                db, sql: "SELECT \(Self.ownersSuspendedColumn) FROM (SELECT ? AS item_id) t", arguments: [now, item]
            ) ?? false
        }
    }

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
                UPDATE trackers SET speed_rejections = ? WHERE id = ? AND active AND NOT \(pairerLeft("trackers"))
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

    /// Every paired item's latest position, read at start (the hub's tracker layer is rebuilt from it).
    public func loadTrackerPositions() throws -> [ItemPosition] {
        try pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT t.item_id, p.lat, p.lon, p.acc, p.alt, p.spd, p.hdg, p.bat, p.ts
                    FROM tracker_positions p JOIN trackers t ON t.id = p.tracker_id
                    """
            ).map { row in
                ItemPosition(
                    item: row["item_id"],
                    fix: Self.trackerPosition(row))
            }
        }
    }

    /// A tracker position from a row of `tracker_positions`' columns (`ts` given when already read).
    private static func trackerPosition(_ row: Row, ts: Int64? = nil) -> Fix {
        Fix(
            lat: row["lat"], lon: row["lon"], acc: row["acc"], alt: row["alt"], spd: row["spd"], hdg: row["hdg"],
            bat: row["bat"], ts: ts ?? row["ts"])
    }

    private static func tracker(_ row: Row) -> TrackerRecord {
        TrackerRecord(
            id: row["id"], device: row["device"], item: row["item_id"], active: row["active"],
            created: row["created_at"], showsItems: row["shows_items"], pairedBy: row["paired_by"],
            pairerLeft: row["pairer_left"])
    }
}

/// What one tracker report writes (`recordTrackerIngest`), queued for a shared commit.
struct TrackerReportWrite: Sendable {
    var tracker: Int64
    var fix: Fix?
    var speedRejections: Int
}
