// The trackers' reports in the shared store: the one part of `TrackerStore` each engine writes its own way (CairnSQL
// has the rest). Reports are group-committed (`PostgresGroupCommit`): the reports that arrive together are written in
// one transaction, a few statements for the whole batch (`unnest` arrays), not two round trips per report. The
// transaction first takes a share lock on the pairers' memberships: an unshare or a role change waits for the reports
// in flight to commit, and a report written after one committed is refused, whichever node it reached.
public import CairnCore
import CairnSQL
public import CairnTrackers

extension PostgresStore: TrackerStore {
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
                    WHERE t.id = r.id AND t.active AND NOT \(SQLTrackers.pairerLeft("t")) RETURNING t.id
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

}

/// What one tracker report writes (`recordTrackerIngest`), queued for a shared commit.
struct PostgresTrackerReport: Sendable {
    var tracker: Int64
    var fix: Fix?
    var speedRejections: Int
}
