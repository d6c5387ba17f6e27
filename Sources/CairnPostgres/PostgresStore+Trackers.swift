// Trackers in the shared store, implementing the domain's `TrackerStore` as the SQLite store does. The unique device
// id, the unique key digest and the one tracker per item are the table's unique constraints, so racing pairings settle
// in the database whichever node they reach; a tracker goes with its item (the foreign key cascades). Reports are
// group-committed (`PostgresGroupCommit`): the reports that arrive together are written in one transaction, a few
// statements for the whole batch (`unnest` arrays), not two round trips per report. Who paired a tracker is checked
// against the bucket's owners in every read of the tracker and in the ingest's write, whose transaction first takes a
// share lock on the pairers' memberships: an unshare or a role change waits for the reports in flight to commit, and a
// report written after one committed is refused, whichever node it reached.
import CairnCore
import CairnTrackers
import Foundation

extension PostgresStore: TrackerStore {
    /// True when tracker `t` was paired by someone who is no longer an owner of its item's bucket (never for a
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

    /// The tracker `id`, read on `db`.
    private static func tracker(_ db: PostgresConnection, id: Int64) throws -> TrackerRecord? {
        try db.row("SELECT \(trackerColumns) FROM trackers t WHERE t.id = ?", [id]).map(tracker)
    }

    public func pairTracker(
        item: Int64, device: String, keyDigest: [UInt8], by pairer: Int64?, at: Int64
    ) async throws -> TrackerRecord {
        do {
            return try await pool.write { db in
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
                    """, [device, item, PostgresBytes(keyDigest), at, pairer])!
                guard let paired = try Self.tracker(db, id: id) else { throw TrackerStoreError.itemNotFound }
                return paired
            }
        } catch let error as PostgresError where error.isUniqueViolation() {
            throw TrackerStoreError.deviceTaken
        }
    }

    public func tracker(id: Int64) async throws -> TrackerRecord? {
        try await pool.read { db in try Self.tracker(db, id: id) }
    }

    public func tracker(device: String) async throws -> (record: TrackerRecord, keyDigest: [UInt8])? {
        let found = try await pool.read { db in
            try db.row("SELECT \(Self.trackerColumns) FROM trackers t WHERE t.device = ?", [device])
        }
        return found.map { row in (Self.tracker(row), row["key_hash"] as [UInt8]) }
    }

    public func tracker(keyDigest: [UInt8]) async throws -> TrackerRecord? {
        try await pool.read { db in
            try db.row("SELECT \(Self.trackerColumns) FROM trackers t WHERE t.key_hash = ?", [PostgresBytes(keyDigest)])
                .map(Self.tracker)
        }
    }

    public func bucketMates(ofTracker tracker: Int64) async throws -> [BucketMate] {
        // The one query that decides what an OwnTracks device is shown: items of the same bucket only, and of those
        // not the hidden ones (a hidden item's position is for the bucket's owners, and a tracker is not an owner);
        // nothing unless the asking tracker is active, shown items, and paired by an owner of the bucket now.
        try await pool.read { db in
            try db.rows(
                """
                SELECT i.id, i.name, p.lat, p.lon, p.acc, p.alt, p.spd, p.hdg, p.bat, p.ts
                FROM trackers me JOIN items mine ON mine.id = me.item_id
                JOIN items i ON i.bucket_id = mine.bucket_id AND i.id != mine.id AND NOT i.hidden
                JOIN trackers t ON t.item_id = i.id JOIN tracker_positions p ON p.tracker_id = t.id
                WHERE me.id = ? AND me.active AND me.shows_items AND NOT \(Self.pairerLeft("me"))
                ORDER BY i.id
                """, [tracker]
            ).map { row in BucketMate(item: row["id"], name: row["name"], fix: Self.trackerPosition(row)) }
        }
    }

    public func trackers(bucket: Int64) async throws -> [TrackerRecord] {
        try await pool.read { db in
            try db.rows(
                """
                SELECT \(Self.trackerColumns) FROM items i JOIN trackers t ON t.item_id = i.id
                WHERE i.bucket_id = ? ORDER BY t.id
                """, [bucket]
            ).map(Self.tracker)
        }
    }

    public func setTrackerShowsItems(id: Int64, shows: Bool) async throws -> TrackerRecord? {
        try await pool.write { db in
            try db.execute("UPDATE trackers SET shows_items = ? WHERE id = ?", [shows, id])
            return try Self.tracker(db, id: id)
        }
    }

    public func setTrackerActive(id: Int64, active: Bool) async throws -> TrackerRecord? {
        try await pool.write { db in
            try db.execute("UPDATE trackers SET active = ? WHERE id = ?", [active, id])
            return try Self.tracker(db, id: id)
        }
    }

    public func unpairTracker(id: Int64) async throws -> Bool {
        try await pool.write { db in try db.execute("DELETE FROM trackers WHERE id = ?", [id]) > 0 }
    }

    public func recordTrackerFix(tracker: Int64, fix: Fix) async throws -> Bool {
        try await pool.write { db in try Self.upsertTrackerFixes(db, [(tracker, fix)]).contains(tracker) }
    }

    public func trackerFix(tracker: Int64) async throws -> Fix? {
        try await pool.read { db in
            try db.row(
                "SELECT lat, lon, acc, alt, spd, hdg, bat, ts FROM tracker_positions WHERE tracker_id = ?", [tracker]
            ).map { Self.trackerPosition($0) }
        }
    }

    /// True when no owner of the bucket of the item `t.item_id` is free of a suspension in force at `?` (now).
    /// Owners are found by the bucket's primary key, suspensions by theirs: a few index lookups.
    private static let ownersSuspendedColumn = """
        NOT EXISTS (
          SELECT 1 FROM items i JOIN bucket_members m ON m.bucket_id = i.bucket_id AND m.role = 'owner'
          WHERE i.id = t.item_id AND NOT EXISTS (
            SELECT 1 FROM suspensions s WHERE s.user_id = m.user_id AND (s.until IS NULL OR s.until > ?)))
        """

    public func trackerIngestState(keyDigest: [UInt8], now: Int64) async throws -> TrackerIngestState? {
        let found = try await pool.read { db in
            try db.row(
                """
                SELECT \(Self.trackerColumns), t.speed_rejections,
                  p.lat, p.lon, p.acc, p.alt, p.spd, p.hdg, p.bat, p.ts,
                  \(Self.ownersSuspendedColumn) AS owners_suspended
                FROM trackers t LEFT JOIN tracker_positions p ON p.tracker_id = t.id
                WHERE t.key_hash = ?
                """, [now, PostgresBytes(keyDigest)])
        }
        guard let row = found else { return nil }
        let ts: Int64? = row["ts"]
        return TrackerIngestState(
            record: Self.tracker(row), keyDigest: row["key_hash"], latest: ts.map { Self.trackerPosition(row, ts: $0) },
            speedRejections: row["speed_rejections"], ownersSuspended: row["owners_suspended"])
    }

    public func trackerOwnersSuspended(item: Int64, now: Int64) async throws -> Bool {
        try await pool.read { db in
            try db.scalar(
                "SELECT \(Self.ownersSuspendedColumn) FROM (SELECT ?::bigint AS item_id) t", [now, item],
                as: Bool.self) ?? false
        }
    }

    public func recordTrackerIngest(tracker: Int64, fix: Fix?, speedRejections: Int) async throws -> Bool {
        try await trackerReports.submit(
            PostgresTrackerReport(tracker: tracker, fix: fix, speedRejections: speedRejections))
    }

    /// A batch of reports in one transaction, with the outcome each would have had written alone in arrival order:
    /// the tracker must still be active and its pairer an owner of its bucket (its own refusal otherwise, the others
    /// unaffected); then the count, and the fix unless older. Reports of one tracker go in successive rounds (its
    /// first report in round one, its second in round two, ...), so each round names a tracker once and is two
    /// statements. The pairers' memberships are share-locked first: an unshare or a role change in flight makes
    /// this transaction wait and then fail to serialize (it is run again, and sees the change), and one that comes
    /// after waits for this commit, so no report is stored after an unshare's reply.
    static func applyTrackerReports(
        _ db: PostgresConnection, _ reports: [PostgresTrackerReport]
    ) throws -> [Result<Bool, any Error>] {
        _ = try db.rows(
            """
            SELECT 1 FROM trackers t JOIN items i ON i.id = t.item_id
            JOIN bucket_members m ON m.bucket_id = i.bucket_id AND m.user_id = t.paired_by
            WHERE t.id = ANY(?::bigint[]) FOR SHARE OF m
            """, [PostgresIntArray(reports.map(\.tracker))])
        var outcomes = [Result<Bool, any Error>](repeating: .success(false), count: reports.count)
        var rounds: [[Int]] = []
        var seen: [Int64: Int] = [:]
        for (index, report) in reports.enumerated() {
            let round = seen[report.tracker, default: 0]
            seen[report.tracker] = round + 1
            if round == rounds.count { rounds.append([]) }
            rounds[round].append(index)
        }
        for round in rounds {
            let active = Set(
                try db.scalars(
                    """
                    UPDATE trackers t SET speed_rejections = r.n FROM unnest(?::bigint[], ?::bigint[]) AS r(id, n)
                    WHERE t.id = r.id AND t.active AND NOT \(pairerLeft("t")) RETURNING t.id
                    """,
                    [
                        PostgresIntArray(round.map { reports[$0].tracker }),
                        PostgresIntArray(round.map { Int64(reports[$0].speedRejections) }),
                    ], as: Int64.self))
            var fixes: [(Int64, Fix)] = []
            for index in round {
                let report = reports[index]
                if !active.contains(report.tracker) {
                    outcomes[index] = .failure(TrackerStoreError.notActive)
                } else if let fix = report.fix {
                    fixes.append((report.tracker, fix))
                }
            }
            let stored = try upsertTrackerFixes(db, fixes)
            for index in round where reports[index].fix != nil && active.contains(reports[index].tracker) {
                outcomes[index] = .success(stored.contains(reports[index].tracker))
            }
        }
        return outcomes
    }

    /// Stores each fix as its tracker's latest unless a newer one is stored (one tracker at most once); returns the
    /// trackers whose fix became the latest.
    private static func upsertTrackerFixes(_ db: PostgresConnection, _ fixes: [(Int64, Fix)]) throws -> Set<Int64> {
        guard !fixes.isEmpty else { return [] }
        let values = fixes.map(\.1)
        return Set(
            try db.scalars(
                """
                INSERT INTO tracker_positions (tracker_id, lat, lon, acc, alt, spd, hdg, bat, ts)
                SELECT * FROM unnest(?::bigint[], ?::float8[], ?::float8[], ?::float8[], ?::float8[], ?::float8[],
                  ?::float8[], ?::float8[], ?::bigint[])
                ON CONFLICT (tracker_id) DO UPDATE SET lat = excluded.lat, lon = excluded.lon, acc = excluded.acc,
                  alt = excluded.alt, spd = excluded.spd, hdg = excluded.hdg, bat = excluded.bat, ts = excluded.ts
                WHERE excluded.ts >= tracker_positions.ts
                RETURNING tracker_id
                """,
                [
                    PostgresIntArray(fixes.map(\.0)), PostgresArray<Double>(values.map(\.lat)),
                    PostgresArray<Double>(values.map(\.lon)), PostgresArray<Double>(values.map(\.acc)),
                    PostgresArray<Double>(values.map(\.alt)), PostgresArray<Double>(values.map(\.spd)),
                    PostgresArray<Double>(values.map(\.hdg)), PostgresArray<Double>(values.map(\.bat)),
                    PostgresIntArray(values.map(\.ts)),
                ], as: Int64.self))
    }

    /// Every paired item's latest position, read at start (the hub's tracker layer is rebuilt from it).
    public func loadTrackerPositions() throws -> [ItemPosition] {
        try pool.read { db in
            try db.rows(
                """
                SELECT t.item_id, p.lat, p.lon, p.acc, p.alt, p.spd, p.hdg, p.bat, p.ts
                FROM tracker_positions p JOIN trackers t ON t.id = p.tracker_id
                """
            ).map { row in ItemPosition(item: row["item_id"], fix: Self.trackerPosition(row)) }
        }
    }

    /// A tracker position from a row of `tracker_positions`' columns (`ts` given when already read).
    private static func trackerPosition(_ row: PostgresRow, ts: Int64? = nil) -> Fix {
        Fix(
            lat: row["lat"], lon: row["lon"], acc: row["acc"], alt: row["alt"], spd: row["spd"], hdg: row["hdg"],
            bat: row["bat"], ts: ts ?? row["ts"])
    }

    private static func tracker(_ row: PostgresRow) -> TrackerRecord {
        TrackerRecord(
            id: row["id"], device: row["device"], item: row["item_id"], active: row["active"],
            created: row["created_at"], showsItems: row["shows_items"], pairedBy: row["paired_by"],
            pairerLeft: row["pairer_left"])
    }
}

/// What one tracker report writes (`recordTrackerIngest`), queued for a shared commit.
struct PostgresTrackerReport: Sendable {
    var tracker: Int64
    var fix: Fix?
    var speedRejections: Int
}
