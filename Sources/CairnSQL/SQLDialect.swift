// What SQLite and PostgreSQL spell differently, and only that: the store's statements are written once and ask the
// dialect for these pieces. Each case keeps the reason its engine needs it:
// - lists: one statement names any number of ids as one parameter (PostgreSQL `= ANY(?::bigint[])`, SQLite
//   `IN (SELECT value FROM json_each(?))`), so its shape is fixed and no statement has thousands of parameters;
// - the larger of two values: SQLite's two-argument `MAX`, PostgreSQL's `greatest`;
// - byte order: SQLite compares text bytewise (BINARY); PostgreSQL compares by the database's collation unless told
//   `COLLATE "C"`, so names would sort (and pages would cut) differently on the two engines without it;
// - case-insensitive matching: SQLite's LIKE ignores ASCII case already; PostgreSQL's LIKE does not, ILIKE does.
//   (The statements' callers check every word afterwards where Unicode case matters.)

/// An engine's SQL spelling.
public enum SQLDialect: Sendable {
    case sqlite
    case postgres

    /// The element type of a list parameter.
    public enum ListType: Sendable {
        case integer
        case text
    }

    /// `column` is one of the list bound to this fragment's `?` (an `SQLIntegers` or `SQLTexts`).
    public func isAny(_ column: String, _ type: ListType = .integer) -> String {
        switch self {
        case .sqlite: "\(column) IN (SELECT value FROM json_each(?))"
        case .postgres: "\(column) = ANY(?::\(type == .integer ? "bigint" : "text")[])"
        }
    }

    /// A table of the list bound to this fragment's `?`, one row per element in a column named `value` (to insert
    /// many rows in one statement).
    public func elements(_ type: ListType = .integer) -> String {
        switch self {
        case .sqlite: "json_each(?)"
        case .postgres: "unnest(?::\(type == .integer ? "bigint" : "text")[]) AS elements(value)"
        }
    }

    /// The larger of two non-NULL values.
    public func greatest(_ a: String, _ b: String) -> String {
        switch self {
        case .sqlite: "MAX(\(a), \(b))"
        case .postgres: "greatest(\(a), \(b))"
        }
    }

    /// `expression` compared and ordered byte by byte (as SQLite does by default).
    public func bytewise(_ expression: String) -> String {
        switch self {
        case .sqlite: expression
        case .postgres: "\(expression) COLLATE \"C\""
        }
    }

    /// The LIKE that ignores (at least ASCII) case.
    public var likeIgnoringCase: String {
        switch self {
        case .sqlite: "LIKE"
        case .postgres: "ILIKE"
        }
    }
}
