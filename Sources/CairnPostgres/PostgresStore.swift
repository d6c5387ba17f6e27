// The shared store of several nodes: the same tables and the same domain ports as the SQLite store, in one
// PostgreSQL database every node reaches (docs/ARCHITECTURE.md, "Several nodes"). Uniqueness, transactions and
// "committed before the reply" hold across nodes because one database commits; PostgreSQL's default
// `synchronous_commit = on` makes a commit durable before it returns. Every call runs on the pool's own threads and
// suspends its caller, so the event loop never waits on the network. Media bytes are shared too (`media_blobs`,
// committed with their row); each node serves them from a local copy (`MediaCache`, PostgresStore+Media.swift).
public import CairnAdmin
public import CairnBuckets
public import CairnChat
public import CairnCore
public import CairnProfiles
public import CairnRelics
public import CairnSQL
public import CairnSessions
public import CairnTrackers
import Foundation
public import Logging

/// Cairn's PostgreSQL store. Its ports are CairnSQL's, run on `database`; this module adds the schema, the pool with
/// its bounded waits, and the media cache.
public final class PostgresStore: SQLStore {
    let pool: PostgresPool
    /// The pool as CairnSQL's ports use it.
    public let database: any SQLTransactions
    /// This node's copies of the media it serves.
    let mediaCache: MediaCache
    let mediaFetches = MediaFetches()
    /// The migrations applied, in order.
    public let migrations: [String]
    /// The URL it was opened with.
    let url: String
    /// Trackers' reports, committed together when they arrive together (a few statements for many).
    let trackerReports: PostgresGroupCommit<PostgresTrackerReport, Bool>

    /// Connects `connections` pool connections to `url` (a libpq URI, `postgres://user:pw@host:port/db`) and applies
    /// pending migrations. `mediaCache` is the directory of this node's media copies (created private; nil: one per
    /// user under the system's temporary directory); `timeouts` bound every wait on the server.
    public init(
        url: String, connections: Int = 4, mediaCache: String? = nil, timeouts: PostgresTimeouts = .standard,
        logger: Logger = Logger(label: "cairn.store")
    ) throws {
        self.url = url
        self.mediaCache = try MediaCache(root: mediaCache ?? MediaCache.defaultRoot)
        let pool = try PostgresPool(url: url, size: connections, timeouts: timeouts, logger: logger)
        do {
            migrations = try PostgresSchema.migrate(pool)
        } catch {
            pool.close()
            throw error
        }
        self.pool = pool
        database = PostgresTransactions(pool: pool)
        trackerReports = PostgresGroupCommit(pool: pool, apply: Self.applyTrackerReports)
        logger.info("PostgreSQL store open, schema \(migrations.last ?? "none")")
    }

    /// Waits for queued work, then closes every connection.
    public func close() {
        pool.close()
    }

    /// The URL it was opened with, its password replaced by `***` (for logs).
    public var redactedURL: String { Self.redact(url) }

    /// `url` with the password of its user-information part replaced by `***`.
    static func redact(_ url: String) -> String {
        var text = url
        // `?password=...` (libpq takes any connection parameter as a query parameter).
        if let query = text.firstIndex(of: "?") {
            let parameters = text[text.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false)
            let masked = parameters.map { parameter -> String in
                parameter.lowercased().hasPrefix("password=") ? "password=***" : String(parameter)
            }
            text = String(text[...query]) + masked.joined(separator: "&")
        }
        // `user:password@`.
        guard let scheme = text.range(of: "://") else { return text }
        let rest = text[scheme.upperBound...]
        let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        guard let at = rest[..<end].lastIndex(of: "@"), let colon = rest[..<at].firstIndex(of: ":") else {
            return text
        }
        return String(text[...colon]) + "***" + String(text[at...])
    }

    /// LIKE's wildcards escaped with a backslash (CairnSQL's `SQLText.escapeLike`).
    static func escapeLike(_ text: String) -> String { SQLText.escapeLike(text) }
}

/// The ports CairnSQL implements once for both engines.
extension PostgresStore: ProfileStore, SafeZoneStore, RoleStore, ChatStore, RelicStore, AdminStore, AdminSettingsStore,
    ActivityStore, BucketStore, AccountStore
{}
