// Durable storage: one SQLite database in the data directory, through GRDB. A `DatabasePool` puts the database in
// WAL mode, so reads never wait for the writer; `synchronous = FULL` makes every commit durable before the call
// returns, which is what lets the hub acknowledge a write only after it is safe. GRDB runs each access on its own
// queues, and the async API suspends the caller instead of blocking it, so the event loop never waits on disk.
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
import GRDB
public import Logging

/// Errors raised while opening the store.
public enum StoreOpenError: Error, CustomStringConvertible {
    /// The data directory could not be created or is not a directory.
    case dataDirectory(String, underlying: String)

    /// A readable explanation.
    public var description: String {
        switch self {
        case .dataDirectory(let path, let underlying): "cannot use data directory '\(path)': \(underlying)"
        }
    }
}

/// Cairn's SQLite store. Its ports are CairnSQL's, run on `database`; this module adds the schema, the pool, backup
/// and the media files.
public final class SQLiteStore: SQLStore {
    /// The database file name inside the data directory.
    public static let fileName = "cairn.sqlite"

    let pool: DatabasePool
    /// The pool as CairnSQL's ports use it.
    public let database: any SQLTransactions
    /// The full path of the database file.
    public let path: String
    /// The directory the store lives in (the data directory).
    public let directory: String
    /// Uploaded media's bytes, under `<directory>/media`.
    public let mediaFiles: MediaFiles
    /// Trackers' reports, committed together when they arrive together (one fsync for many).
    let trackerReports: GroupCommit<TrackerReportWrite, Bool>

    /// Opens (creating if needed) the database in `directory` and applies pending migrations.
    public init(directory: String, logger: Logger = Logger(label: "cairn.store")) throws {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        if fm.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw StoreOpenError.dataDirectory(directory, underlying: "exists and is not a directory")
            }
        } else {
            do {
                try fm.createDirectory(
                    atPath: directory, withIntermediateDirectories: true,
                    attributes: [.posixPermissions: 0o700])
            } catch {
                throw StoreOpenError.dataDirectory(directory, underlying: "\(error.localizedDescription)")
            }
        }
        self.directory = directory
        path = (directory as NSString).appendingPathComponent(Self.fileName)
        mediaFiles = try MediaFiles(root: (directory as NSString).appendingPathComponent("media"))
        var config = Configuration()
        config.busyMode = .timeout(5)
        config.prepareDatabase { db in
            // FULL: a commit is on disk (WAL fsynced) before it returns, so acknowledged writes survive power loss.
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "PRAGMA foreign_keys = ON")
        }
        // SQLite would create the file 0644 (less the umask), and its -wal and -shm take the database's mode: create
        // it owner-only first, so every copy of the data on disk is private to the hub's user.
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StoreOpenError.dataDirectory(
                directory,
                underlying: "cannot create \(Self.fileName): "
                    + String(cString: strerror(errno)))
        }
        Glibc.close(fd)
        pool = try DatabasePool(path: path, configuration: config)
        database = SQLiteTransactions(pool: pool)
        // GRDB's DatabasePool sets `synchronous = NORMAL` on its writer after `prepareDatabase` has run (it turns WAL
        // on there), which would leave commits unsynced until the next checkpoint: set FULL again on the writer, the
        // only connection that commits.
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        trackerReports = GroupCommit(pool: pool, apply: Self.applyTrackerReport)
        try Migrations.migrator.migrate(pool)
        let schema = try pool.read { try Migrations.migrator.appliedMigrations($0) }.last ?? "none"
        logger.info("store open at \(path), schema \(schema)")
    }

    /// Waits for every write already queued, then closes the database.
    public func close() throws {
        try pool.barrierWriteWithoutTransaction { _ in }
        try pool.close()
    }

    /// The SQLite journal mode in force ("wal" when healthy).
    public func journalMode() throws -> String {
        try pool.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") ?? "" }
    }

    /// The writer's `PRAGMA synchronous` level (2, FULL, when healthy: every commit is fsynced before it returns).
    public func writerSynchronousLevel() throws -> Int {
        try pool.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA synchronous") ?? -1 }
    }

    /// The migrations applied so far, in order.
    public func appliedMigrations() throws -> [String] {
        try pool.read { try Migrations.migrator.appliedMigrations($0) }
    }
}

/// The ports CairnSQL implements once for both engines.
extension SQLiteStore: ProfileStore, SafeZoneStore, RoleStore, ChatStore, RelicStore, AdminStore, AdminSettingsStore,
    ActivityStore, BucketStore, AccountStore
{}

extension SQLiteStore {
    /// Appends an admin's audit line inside the caller's transaction (CairnSQL's `SQLAdmin.append`).
    static func append(_ audit: AuditEntry, _ db: Database) throws {
        try SQLAdmin.append(audit, SQLiteDatabase(db: db))
    }
}

extension SQLiteStore {
    /// LIKE's wildcards escaped with a backslash (CairnSQL's `SQLText.escapeLike`).
    static func escapeLike(_ text: String) -> String { SQLText.escapeLike(text) }
}
