// `admin.stats {days?}` (docs/PROTOCOL.md, Administration): the daily figures of the last `days` UTC days, today
// included, for an admin. The figures are read off the loop from every feature's provider (`AdminStatistics`); the
// CSV endpoint reads the same rows with a bearer token instead of a connection.
public import CairnCore

extension Administration {
    /// One row per UTC day of the last `days` days (default 30, at most 366), oldest first.
    public func stats(_ caller: Caller, days: Int64?, _ done: @escaping Outcome<[DailyStatsRow]>) {
        let count: Int
        do { count = try AdminStatistics.checkedDays(days) } catch { return refuse(caller, error, done) }
        let statistics = self.statistics
        asAdmin(
            caller, { _ async throws(DomainError) -> [DailyStatsRow] in try await statistics.rows(days: count) },
            then: done)
    }
}
