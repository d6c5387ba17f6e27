// Trackers, implementing the domain's `TrackerStore` but for the reports' write. The unique device id, the unique key
// digest and the one tracker per item are the table's unique constraints, so racing pairings settle in the database
// whichever node they reach; a tracker goes with its item (the foreign key cascades). Only the digest of a key is
// stored, unique and indexed, so Overland's key-only requests find their tracker. Who paired a tracker is checked
// against the bucket's owners in every read of the tracker (`SQLTrackers.pairerLeft`) and in the ingest's write. The
// reports are group-committed, and that write is each engine's own (`recordTrackerIngest`): SQLite applies a batch
// report by report with cached statements, PostgreSQL in a few statements for the whole batch (no round trip per
// report) after share-locking the pairers' memberships.
public import CairnCore
public import CairnTrackers
import Foundation

extension SQLStore {
    /// A tracker's columns, from `trackers t`.
    private static var trackerColumns: String {
        "t.id, t.device, t.item_id, t.active, t.created_at, t.key_hash, t.shows_items, t.paired_by, "
            + "\(SQLTrackers.pairerLeft("t")) AS pairer_left"
    }

    /// The tracker `id`, read on `db`.
    private static func tracker(_ db: any SQLDatabase, id: Int64) throws -> TrackerRecord? {
        try db.row("SELECT \(trackerColumns) FROM trackers t WHERE t.id = ?", [id]).map(tracker)
    }

    public func pairTracker(
        item: Int64, device: String, keyDigest: [UInt8], by pairer: Int64?, at: Int64
    ) async throws -> TrackerRecord {
        do {
            return try await database.write { db in
                guard try db.scalar("SELECT 1 FROM items WHERE id = ?", [item], as: Int.self) != nil else {
                    throw TrackerStoreError.itemNotFound
                }
                if try db.scalar("SELECT 1 FROM trackers WHERE item_id = ?", [item], as: Int.self) != nil {
                    throw TrackerStoreError.itemTaken
                }
                let id: Int64 = try db.scalar(
                    """
                    INSERT INTO trackers (device, item_id, key_hash, active, created_at, paired_by)
                    VALUES (?, ?, ?, false, ?, ?) RETURNING id
                    """, [device, item, Data(keyDigest), at, pairer])!
                guard let paired = try Self.tracker(db, id: id) else { throw TrackerStoreError.itemNotFound }
                return paired
            }
        } catch  where database.isUniqueViolation(error) {
            throw TrackerStoreError.deviceTaken
        }
    }

    public func tracker(id: Int64) async throws -> TrackerRecord? {
        try await database.read { db in try Self.tracker(db, id: id) }
    }

    public func tracker(device: String) async throws -> (record: TrackerRecord, keyDigest: [UInt8])? {
        let found = try await database.read { db in
            try db.row("SELECT \(Self.trackerColumns) FROM trackers t WHERE t.device = ?", [device])
        }
        return found.map { row in (Self.tracker(row), row["key_hash"] as [UInt8]) }
    }

    public func tracker(keyDigest: [UInt8]) async throws -> TrackerRecord? {
        try await database.read { db in
            try db.row("SELECT \(Self.trackerColumns) FROM trackers t WHERE t.key_hash = ?", [Data(keyDigest)])
                .map(Self.tracker)
        }
    }

    public func bucketMates(ofTracker tracker: Int64) async throws -> [BucketMate] {
        // The one query that decides what an OwnTracks device is shown: items of the same bucket only, and of those
        // not the hidden ones (a hidden item's position is for the bucket's owners, and a tracker is not an owner);
        // nothing unless the asking tracker is active, shown items, and paired by an owner of the bucket now.
        try await database.read { db in
            try db.rows(
                """
                SELECT i.id, i.name, p.lat, p.lon, p.acc, p.alt, p.spd, p.hdg, p.bat, p.ts
                FROM trackers me JOIN items mine ON mine.id = me.item_id
                JOIN items i ON i.bucket_id = mine.bucket_id AND i.id != mine.id AND NOT i.hidden
                JOIN trackers t ON t.item_id = i.id JOIN tracker_positions p ON p.tracker_id = t.id
                WHERE me.id = ? AND me.active AND me.shows_items AND NOT \(SQLTrackers.pairerLeft("me"))
                ORDER BY i.id
                """, [tracker]
            ).map { row in BucketMate(item: row["id"], name: row["name"], fix: Self.trackerPosition(row)) }
        }
    }

    public func trackers(bucket: Int64) async throws -> [TrackerRecord] {
        try await database.read { db in
            try db.rows(
                """
                SELECT \(Self.trackerColumns) FROM items i JOIN trackers t ON t.item_id = i.id
                WHERE i.bucket_id = ? ORDER BY t.id
                """, [bucket]
            ).map(Self.tracker)
        }
    }

    public func setTrackerShowsItems(id: Int64, shows: Bool) async throws -> TrackerRecord? {
        try await database.write { db in
            try db.execute("UPDATE trackers SET shows_items = ? WHERE id = ?", [shows, id])
            return try Self.tracker(db, id: id)
        }
    }

    public func setTrackerActive(id: Int64, active: Bool) async throws -> TrackerRecord? {
        try await database.write { db in
            try db.execute("UPDATE trackers SET active = ? WHERE id = ?", [active, id])
            return try Self.tracker(db, id: id)
        }
    }

    public func unpairTracker(id: Int64) async throws -> Bool {
        try await database.write { db in try db.execute("DELETE FROM trackers WHERE id = ?", [id]) > 0 }
    }

    public func recordTrackerFix(tracker: Int64, fix: Fix) async throws -> Bool {
        try await database.write { db in
            try !db.rows(
                """
                INSERT INTO tracker_positions (tracker_id, lat, lon, acc, alt, spd, hdg, bat, ts)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (tracker_id) DO UPDATE SET lat = excluded.lat, lon = excluded.lon, acc = excluded.acc,
                  alt = excluded.alt, spd = excluded.spd, hdg = excluded.hdg, bat = excluded.bat, ts = excluded.ts
                WHERE excluded.ts >= tracker_positions.ts
                RETURNING tracker_id
                """, [tracker, fix.lat, fix.lon, fix.acc, fix.alt, fix.spd, fix.hdg, fix.bat, fix.ts]
            ).isEmpty
        }
    }

    public func trackerFix(tracker: Int64) async throws -> Fix? {
        try await database.read { db in
            try db.row(
                "SELECT lat, lon, acc, alt, spd, hdg, bat, ts FROM tracker_positions WHERE tracker_id = ?", [tracker]
            ).map { Self.trackerPosition($0) }
        }
    }

    /// True when no owner of the bucket of the item `t.item_id` is free of a suspension in force at `?` (now).
    /// Owners are found by the bucket's primary key, suspensions by theirs: a few index lookups.
    private static var ownersSuspendedColumn: String {
        """
        NOT EXISTS (
          SELECT 1 FROM items i JOIN bucket_members m ON m.bucket_id = i.bucket_id AND m.role = 'owner'
          WHERE i.id = t.item_id AND NOT EXISTS (
            SELECT 1 FROM suspensions s WHERE s.user_id = m.user_id AND (s.until IS NULL OR s.until > ?)))
        """
    }

    public func trackerIngestState(keyDigest: [UInt8], now: Int64) async throws -> TrackerIngestState? {
        let found = try await database.read { db in
            try db.row(
                """
                SELECT \(Self.trackerColumns), t.speed_rejections,
                  p.lat, p.lon, p.acc, p.alt, p.spd, p.hdg, p.bat, p.ts,
                  \(Self.ownersSuspendedColumn) AS owners_suspended
                FROM trackers t LEFT JOIN tracker_positions p ON p.tracker_id = t.id
                WHERE t.key_hash = ?
                """, [now, Data(keyDigest)])
        }
        guard let row = found else { return nil }
        let ts: Int64? = row["ts"]
        return TrackerIngestState(
            record: Self.tracker(row), keyDigest: row["key_hash"], latest: ts.map { Self.trackerPosition(row, ts: $0) },
            speedRejections: row["speed_rejections"], ownersSuspended: row["owners_suspended"])
    }

    public func trackerOwnersSuspended(item: Int64, now: Int64) async throws -> Bool {
        try await database.read { db in
            try db.scalar(
                "SELECT \(Self.ownersSuspendedColumn) FROM (SELECT CAST(? AS BIGINT) AS item_id) t", [now, item],
                as: Bool.self) ?? false
        }
    }

    /// Every paired item's latest position, read at start (the hub's tracker layer is rebuilt from it).
    public func loadTrackerPositions() throws -> [ItemPosition] {
        try database.read { db in
            try db.rows(
                """
                SELECT t.item_id, p.lat, p.lon, p.acc, p.alt, p.spd, p.hdg, p.bat, p.ts
                FROM tracker_positions p JOIN trackers t ON t.id = p.tracker_id
                """
            ).map { row in ItemPosition(item: row["item_id"], fix: Self.trackerPosition(row)) }
        }
    }

    /// A tracker position from a row of `tracker_positions`' columns (`ts` given when already read).
    private static func trackerPosition(_ row: SQLRow, ts: Int64? = nil) -> Fix {
        Fix(
            lat: row["lat"], lon: row["lon"], acc: row["acc"], alt: row["alt"], spd: row["spd"], hdg: row["hdg"],
            bat: row["bat"], ts: ts ?? row["ts"])
    }

    private static func tracker(_ row: SQLRow) -> TrackerRecord {
        TrackerRecord(
            id: row["id"], device: row["device"], item: row["item_id"], active: row["active"],
            created: row["created_at"], showsItems: row["shows_items"], pairedBy: row["paired_by"],
            pairerLeft: row["pairer_left"])
    }
}

/// What the engines' report writes share with the reads.
public enum SQLTrackers {
    /// True when tracker `t` was paired by someone who is no longer an owner of its item's bucket (never for a
    /// tracker whose pairer was not recorded). Two primary-key look-ups.
    public static func pairerLeft(_ t: String) -> String {
        """
        (\(t).paired_by IS NOT NULL AND NOT EXISTS (
          SELECT 1 FROM items pi JOIN bucket_members pm ON pm.bucket_id = pi.bucket_id
          WHERE pi.id = \(t).item_id AND pm.user_id = \(t).paired_by AND pm.role = 'owner'))
        """
    }
}
