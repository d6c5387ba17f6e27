// A suspended account (docs/PROTOCOL.md, Administration): an admin's decision, stored, that keeps the account out
// until it is lifted or its time runs out. While it holds, `login` and `auth` answer `suspended` and the account's
// connections are closed with 4503. The wording of the refusal lives here so every route words it alike.
public import CairnCore
import CairnErrorCodes

/// An account's suspension.
public struct Suspension: Sendable, Equatable {
    /// Why, as the admin wrote it.
    public var reason: String
    /// When it began, ms since the epoch.
    public var since: Int64
    /// When it ends by itself, ms since the epoch; nil: until an admin lifts it.
    public var until: Int64?

    /// Creates the value.
    public init(reason: String, since: Int64, until: Int64?) {
        self.reason = reason
        self.since = since
        self.until = until
    }

    /// True while it holds at `now`.
    public func holds(at now: Int64) -> Bool { until.map { now < $0 } ?? true }

    /// The refusal `login` and `auth` answer with: code `suspended`, the end (ISO 8601 UTC, or "until lifted")
    /// and the reason in the message, and the end as the detail `until` (ms) when there is one.
    public var refusal: DomainError {
        let end = until.map { "until \(Self.iso8601($0))" } ?? "until lifted"
        let error = DomainError(.suspended, "Account suspended \(end): \(reason)")
        return until.map { error.with(.init("until", $0)) } ?? error
    }

    /// `ms` as `YYYY-MM-DDTHH:MM:SSZ` (UTC), without Foundation.
    package static func iso8601(_ ms: Int64) -> String {
        let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        var days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let rest = seconds - days * 86_400
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let doe = days - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(year)-\(two(month))-\(two(day))T\(two(rest / 3600)):\(two(rest % 3600 / 60)):\(two(rest % 60))Z"
    }
}
