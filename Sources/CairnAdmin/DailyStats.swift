// The figures of `admin.stats` and `/v1/admin/stats.csv` (docs/PROTOCOL.md, Administration): one row per UTC day.
// Each feature that has figures to give implements `DailyStatsProvider` over its own tables (the store does, one
// small provider per feature) and is added to `AdminStatistics`; a column no provider fills reads 0 (a median: none),
// so a feature that lands later adds its columns without touching the others.
import CairnSessions

/// A column of the daily figures, in the order rows list them; the raw value is its name on the wire and in CSV.
public enum DailyStatColumn: String, CaseIterable, Sendable {
    /// Accounts registered that day (guests not counted).
    case newUsers = "new_users"
    /// Registered accounts that authenticated or sent an op that day (`ActivityLog`).
    case activeUsers = "active_users"
    /// Pictures posted that day.
    case picturesPosted = "pictures_posted"
    /// Likes given that day.
    case likes
    /// Reports opened that day.
    case reportsOpened = "reports_opened"
    /// Reports resolved (restored or removed) that day.
    case reportsResolved = "reports_resolved"
    /// The median time from opening to resolving of the reports resolved that day, in seconds; none when none was.
    case medianResolveSeconds = "median_resolve_s"

    /// True for a column that may have no value on a day (a median of nothing).
    public var isOptional: Bool { self == .medianResolveSeconds }
}

/// The UTC days of a range: `days` days ending with `lastDay`, counted in days since 1970-01-01.
public struct DailyStatsRange: Sendable, Equatable {
    /// The first day.
    public var firstDay: Int64
    /// How many days.
    public var days: Int
    /// The last day.
    public var lastDay: Int64 { firstDay + Int64(days) - 1 }
    /// The first millisecond of the range.
    public var startMs: Int64 { firstDay * DailyStatsRange.dayMs }
    /// The millisecond after the range.
    public var endMs: Int64 { (lastDay + 1) * DailyStatsRange.dayMs }

    /// Milliseconds in a day.
    public static let dayMs: Int64 = 86_400_000

    /// Creates the value.
    public init(firstDay: Int64, days: Int) {
        self.firstDay = firstDay
        self.days = days
    }

    /// The day of `ms` (UTC).
    public static func day(of ms: Int64) -> Int64 { ms >= 0 ? ms / dayMs : (ms - dayMs + 1) / dayMs }

    /// The median of durations in milliseconds, in whole seconds (the mean of the middle two for an even count); nil
    /// for none.
    public static func medianSeconds(_ durationsMs: [Int64]) -> Int64? {
        guard !durationsMs.isEmpty else { return nil }
        let sorted = durationsMs.sorted()
        let middle = sorted.count / 2
        let ms = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        return ms / 1000
    }

    /// The index in the range of `day`, or nil outside it.
    public func index(of day: Int64) -> Int? { (firstDay...lastDay).contains(day) ? Int(day - firstDay) : nil }
}

/// One day's figures.
public struct DailyStatsRow: Sendable, Equatable {
    /// The day, in days since 1970-01-01 (UTC).
    public var day: Int64
    /// The figures by column; a column without a value (a median of nothing) is absent.
    public var values: [DailyStatColumn: Int64]

    /// The day as `YYYY-MM-DD`.
    public var date: String { String(Suspension.iso8601(day * DailyStatsRange.dayMs).prefix(10)) }
}

/// A feature's part of the daily figures, read off the loop.
public protocol DailyStatsProvider: Sendable {
    /// The columns it fills.
    var columns: [DailyStatColumn] { get }
    /// For each of its columns, a value per day of `range` (index 0: the first day); nil where there is none.
    func dailyStats(_ range: DailyStatsRange) async throws -> [DailyStatColumn: [Int64?]]
}
