// The shared store of several nodes: the same tables and the same domain ports as the SQLite store, in one
// PostgreSQL database every node reaches (docs/ARCHITECTURE.md, "Several nodes"). Uniqueness, transactions and
// "committed before the reply" hold across nodes because one database commits; PostgreSQL's default
// `synchronous_commit = on` makes a commit durable before it returns. Every call runs on the pool's own threads and
// suspends its caller, so the event loop never waits on the network. Media bytes stay in the node's data directory
// (`MediaFiles`); the rows naming them are shared.
import CairnDomain
import Foundation
import Logging

/// Cairn's PostgreSQL store.
public final class PostgresStore: Sendable {
    let pool: PostgresPool
    /// The migrations applied, in order.
    public let migrations: [String]
    /// Trackers' reports, committed together when they arrive together (a few statements for many).
    let trackerReports: PostgresGroupCommit<PostgresTrackerReport, Bool>

    /// Connects `connections` pool connections to `url` (a libpq URI, `postgres://user:pw@host:port/db`) and applies
    /// pending migrations.
    public init(url: String, connections: Int = 4, logger: Logger = Logger(label: "cairn.store")) throws {
        pool = try PostgresPool(url: url, size: connections, logger: logger)
        migrations = try PostgresSchema.migrate(pool)
        trackerReports = PostgresGroupCommit(pool: pool, apply: Self.applyTrackerReports)
        logger.info("PostgreSQL store open, schema \(migrations.last ?? "none")")
    }

    /// Waits for queued work, then closes every connection.
    public func close() {
        pool.close()
    }

    /// LIKE's wildcards escaped with a backslash (the statements say `ESCAPE '\'`).
    static func escapeLike(_ text: String) -> String {
        var out = ""
        for ch in text.unicodeScalars {
            if ch == "%" || ch == "_" || ch == "\\" { out.unicodeScalars.append("\\") }
            out.unicodeScalars.append(ch)
        }
        return out
    }
}
