// The daily figures, put together from every feature's `DailyStatsProvider` (docs/PROTOCOL.md, Administration). It is
// asked off the loop — by `admin.stats` through `LoopWork` and by the CSV endpoint from its HTTP task — so it holds
// nothing of the loop's: the providers (added while the hub is assembled), the accounts and roles that decide who may
// read the CSV with a bearer token, and the clock that says which day is today.
public import CairnCore
import CairnErrorCodes
package import CairnSessions
import Synchronization

/// The daily figures and who may read them over HTTP. Safe from any thread.
public final class AdminStatistics: Sendable {
    /// Days a request covers unless it asks otherwise.
    public static let defaultDays = 30
    /// The most days a request may cover.
    public static let maxDays = 366

    private let providers = Mutex<[any DailyStatsProvider]>([])
    private let accounts: Accounts
    private let roles: (any RoleStore)?
    private let clock: any Clock

    package init(accounts: Accounts, roles: (any RoleStore)?, clock: any Clock) {
        self.accounts = accounts
        self.roles = roles
        self.clock = clock
    }

    /// Adds a feature's figures (while the hub is assembled; a column filled twice keeps the later provider's).
    public func add(_ provider: any DailyStatsProvider) { providers.withLock { $0.append(provider) } }

    /// The columns some provider fills; the others read 0 (or nothing, for a median).
    public var filledColumns: Set<DailyStatColumn> {
        providers.withLock { Set($0.flatMap(\.columns)) }
    }

    /// `days` checked: nil is the default, otherwise 1–`maxDays`.
    public static func checkedDays(_ days: Int64?) throws(DomainError) -> Int {
        guard let days else { return defaultDays }
        guard (1...Int64(maxDays)).contains(days) else {
            throw .badRequest("field 'days' must be 1–\(maxDays)")
        }
        return Int(days)
    }

    /// One row per UTC day of the last `days` days, today included, oldest first.
    public func rows(days: Int) async throws(DomainError) -> [DailyStatsRow] {
        let today = DailyStatsRange.day(of: clock.now())
        let range = DailyStatsRange(firstDay: today - Int64(days) + 1, days: days)
        var rows = (0..<days).map { n in
            DailyStatsRow(
                day: range.firstDay + Int64(n),
                values: Dictionary(
                    uniqueKeysWithValues: DailyStatColumn.allCases.filter { !$0.isOptional }.map { ($0, 0) }))
        }
        for provider in providers.withLock({ $0 }) {
            let columns = try await LoopWork.storage { try await provider.dailyStats(range) }
            for (column, values) in columns {
                for (n, value) in values.prefix(days).enumerated() { rows[n].values[column] = value }
            }
        }
        return rows
    }

    /// The admin a bearer token belongs to: `unauthorized` without a valid token, `suspended` for a suspended
    /// account, `forbidden` without the admin role (the CSV endpoint's check).
    public func admin(token: String?) async throws(DomainError) -> User {
        guard let token else { throw DomainError(.unauthorized, "bearer token required") }
        let user = try await accounts.authenticate(token: token)
        guard let roles, try await LoopWork.storage({ try await roles.hasRole(.admin, userID: user.id) }) else {
            throw Administration.notAdmin
        }
        return user
    }
}
