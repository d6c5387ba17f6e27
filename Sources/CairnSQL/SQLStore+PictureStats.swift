// The pictures' part of the daily figures (`admin.stats`, `/v1/admin/stats.csv`): pictures posted, likes given,
// reports opened and resolved per UTC day, and the median time from report to resolution of the reports resolved
// that day. Read from the pictures' own tables, off the loop. A deleted picture takes its likes and reports with it,
// so the figures of past days count what still exists.
public import CairnAdmin

extension SQLStore {
    /// The pictures' daily figures.
    public var pictureDailyStats: any DailyStatsProvider { SQLPictureDailyStats(database: database) }
}

/// Pictures, likes and reports per day.
struct SQLPictureDailyStats: DailyStatsProvider {
    let database: any SQLTransactions

    var columns: [DailyStatColumn] {
        [.picturesPosted, .likes, .reportsOpened, .reportsResolved, .medianResolveSeconds]
    }

    func dailyStats(_ range: DailyStatsRange) async throws -> [DailyStatColumn: [Int64?]] {
        try await database.read { db in
            func perDay(_ table: String, _ column: String) throws -> [Int64?] {
                var counts = [Int64?](repeating: 0, count: range.days)
                for row in try db.rows(
                    """
                    SELECT \(column) / \(DailyStatsRange.dayMs) AS day, COUNT(*) AS n FROM \(table)
                    WHERE \(column) >= ? AND \(column) < ? GROUP BY 1
                    """, [range.startMs, range.endMs])
                {
                    if let n = range.index(of: row["day"]) { counts[n] = row["n"] }
                }
                return counts
            }
            var resolving = [[Int64]](repeating: [], count: range.days)
            for row in try db.rows(
                """
                SELECT resolved_at, resolved_at - created_at AS took FROM picture_reports
                WHERE state = 'resolved' AND resolved_at >= ? AND resolved_at < ?
                """, [range.startMs, range.endMs])
            {
                if let n = range.index(of: DailyStatsRange.day(of: row["resolved_at"])) {
                    resolving[n].append(max(0, row["took"] as Int64))
                }
            }
            let medians = resolving.map(DailyStatsRange.medianSeconds)
            return [
                .picturesPosted: try perDay("pictures", "created_at"),
                .likes: try perDay("picture_likes", "created_at"),
                .reportsOpened: try perDay("picture_reports", "created_at"),
                .reportsResolved: try perDay("picture_reports", "resolved_at"),
                .medianResolveSeconds: medians,
            ]
        }
    }
}
