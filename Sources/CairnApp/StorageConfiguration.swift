// `[storage]`'s choice of engine: without `url` the hub keeps everything in SQLite in its data directory, exactly as
// a single node always has; with a PostgreSQL URL the durable state lives in that database, which several nodes
// share (docs/ARCHITECTURE.md, "Several nodes"). The check lives here so `cairn config check` and the hub's start
// refuse the same URLs with the same words.

/// The storage settings of one hub.
public struct StorageConfiguration: Sendable, Equatable {
    /// A libpq URI (`postgresql://user:password@host:port/database`); nil: SQLite in the data directory.
    public var url: String?
    /// How many connections to PostgreSQL this hub keeps (each on its own thread).
    public var connections = 4
    /// PostgreSQL's statement timeout in seconds (0: none); the client gives up 2 s later (PostgresTimeouts).
    public var statementTimeout: Double = 10

    /// The defaults: SQLite.
    public init() {}

    /// True when the durable state lives in PostgreSQL.
    public var isShared: Bool { url != nil }

    /// Why `url` cannot be used as `storage.url`, or nil.
    public static func problem(url: String) -> String? {
        guard url.hasPrefix("postgresql://") || url.hasPrefix("postgres://") else {
            return "storage.url must be a PostgreSQL URI (postgresql://user:password@host:port/database)"
        }
        return nil
    }
}
