// What the `cairn` command does to a data directory besides serving it: give or take the ops or admin role
// (`cairn user grant-ops` / `revoke-ops`, `grant-admin` / `revoke-admin`), write load-test fixtures (`cairn seed`),
// copy the database (`cairn backup`). It lives in the composition layer so the command line reaches the store, the
// domain and the crypto only through here, and it offers only what those commands need, in plain values and errors
// a command can print. Roles and places work on either engine: a data directory's SQLite, or the PostgreSQL database
// several hubs share (`storage.url`, `Maintenance(storageURL:)`); `seed` writes to either too; a backup copies SQLite
// only (PostgreSQL has pg_dump). Each SQLite opening says whether it may run beside a hub; the ones that may not hold
// the data directory's lock (`DataDirectoryLock`). PostgreSQL is always shared with running hubs.
import CairnCore
import CairnCrypto
import CairnPostgres
import CairnSessions
import CairnStore
import Foundation

/// Why a maintenance operation could not do its job.
public enum MaintenanceError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No account has this username.
    case noSuchUser(String)
    /// An account with a username the seed would create exists already.
    case usernameTaken
    /// The data directory has no database (and this operation does not create one).
    case noDatabase(String)
    /// The operation needs the data directory to itself, and it was opened `besideHub`.
    case needsExclusiveAccess
    /// A file to read could not be read.
    case unreadableFile(String)
    /// What the operator asked for breaks a rule (a bad username, a short password, an admin to suspend, ...).
    case invalid(String)

    /// A readable explanation.
    public var description: String {
        switch self {
        case .noSuchUser(let name): "no user named '\(name)'"
        case .usernameTaken: "a username to be created is taken"
        case .noDatabase(let directory): "no database in \(directory) (is this the hub's data directory?)"
        case .needsExclusiveAccess: "this needs the data directory to itself (open it with exclusive access)"
        case .unreadableFile(let path): "cannot read \(path)"
        case .invalid(let message): message
        }
    }
}

/// What a backup produced.
public struct BackupReport: Sendable {
    /// The database that was copied.
    public let source: String
    /// The backup file.
    public let destination: String
    /// Its size in bytes.
    public let bytes: Int
    /// The newest migration in the copy.
    public let schema: String
}

/// How a maintenance command shares the data directory with a hub.
public enum MaintenanceAccess: Sendable {
    /// Beside a hub serving the same directory (SQLite in WAL mode lets both write, and the hub reads roles at each
    /// use). The database must exist: a mistyped directory is an error, not a new empty database.
    case besideHub
    /// Alone: takes the data directory's lock (refused with `DataDirectoryLockError.held` while a hub or another
    /// such command runs) and creates the database if needed. Needed to write what a hub keeps in memory (`seed`).
    case exclusive(purpose: String)
}

/// A data directory, or a shared PostgreSQL database, opened for maintenance.
public final class Maintenance: Sendable {
    let store: any HubStorage
    private let lock: DataDirectoryLock?
    /// The data directory (nil for a PostgreSQL database).
    public let dataDirectory: String?
    /// Where the data lives, for messages (a path, or the database without its password).
    public var location: String { store.location }
    /// True for the PostgreSQL database several hubs share.
    public var isShared: Bool { dataDirectory == nil }
    /// True when this opening holds the data directory's lock (no hub runs on it).
    var hasLock: Bool { lock != nil }

    /// Opens the database in `dataDirectory` with `access`.
    public init(dataDirectory: String, access: MaintenanceAccess) throws {
        self.dataDirectory = dataDirectory
        switch access {
        case .besideHub:
            lock = nil
            let database = (dataDirectory as NSString).appendingPathComponent(SQLiteStore.fileName)
            guard FileManager.default.fileExists(atPath: database) else {
                throw MaintenanceError.noDatabase(dataDirectory)
            }
        case .exclusive(let purpose):
            lock = try DataDirectoryLock(directory: dataDirectory, purpose: purpose)
        }
        store = try SQLiteStore(directory: dataDirectory)
    }

    /// Opens the PostgreSQL database at `url` (`storage.url`), beside the hubs that share it (migrated first if
    /// new, as a hub would). Throws `StorageStartError` for a URL that is not PostgreSQL's.
    public init(storageURL url: String) throws {
        if let problem = StorageConfiguration.problem(url: url) { throw StorageStartError(problem) }
        dataDirectory = nil
        lock = nil
        store = try PostgresStore(url: url, connections: 1, timeouts: .none)
    }

    /// Commits what is pending, closes the database and gives up the lock, if held.
    public func close() throws {
        defer { lock?.release() }
        try store.closeStorage()
    }

    /// Gives the account named `username` the ops role (may watch the stats channel); false when it had it
    /// already. Committed on return. Throws `MaintenanceError.noSuchUser` for an unknown name.
    public func grantOps(username: String) throws -> Bool {
        try changingRole { try store.grantRole(.ops, username: username, at: SystemClock().now()) }
    }

    /// Takes the ops role away from the account named `username`; false when it did not have it. Committed on
    /// return. Throws `MaintenanceError.noSuchUser` for an unknown name.
    public func revokeOps(username: String) throws -> Bool {
        try changingRole { try store.revokeRole(.ops, username: username) }
    }

    /// Gives the account named `username` the admin role (may use the `admin.*` ops); false when it had it already.
    /// Committed on return. Throws `MaintenanceError.noSuchUser` for an unknown name.
    public func grantAdmin(username: String) throws -> Bool {
        try changingRole { try store.grantRole(.admin, username: username, at: SystemClock().now()) }
    }

    /// Takes the admin role away from the account named `username`; false when it did not have it. Committed on
    /// return. Throws `MaintenanceError.noSuchUser` for an unknown name.
    public func revokeAdmin(username: String) throws -> Bool {
        try changingRole { try store.revokeRole(.admin, username: username) }
    }

    /// Writes the plan's users, friendships and tokens (see `Fixtures`) and returns the tokens file's contents.
    /// Throws `MaintenanceError.usernameTaken` when a username it would create exists; nothing is written then.
    /// Needs `exclusive` access: a running hub would never learn of the new friendships.
    public func seed(_ plan: FixturePlan) async throws -> FixtureFile {
        guard lock != nil, let sqlite = store as? SQLiteStore else { throw MaintenanceError.needsExclusiveAccess }
        do {
            return try await Fixtures.generate(plan, into: sqlite, random: SecureRandom(), clock: SystemClock())
        } catch AccountStoreError.usernameTaken {
            throw MaintenanceError.usernameTaken
        }
    }

    /// Writes the plan's users, friendships and tokens into the PostgreSQL database at `url` (`storage.url`, shared
    /// by several nodes; migrated first if new) and returns the tokens file's contents. Run it before the nodes
    /// start: each reads friendships into memory when it starts, and nothing here can stop a running node as the
    /// data directory's lock does for SQLite. Throws `MaintenanceError.usernameTaken` as `seed` does.
    public static func seed(_ plan: FixturePlan, storageURL url: String) async throws -> FixtureFile {
        if let problem = StorageConfiguration.problem(url: url) { throw StorageStartError(problem) }
        let store = try PostgresStore(url: url, connections: 1, timeouts: .none)
        defer { store.close() }
        do {
            return try await Fixtures.generate(plan, into: store, random: SecureRandom(), clock: SystemClock())
        } catch AccountStoreError.usernameTaken {
            throw MaintenanceError.usernameTaken
        }
    }

    /// Copies the database of `dataDirectory` to the new file `destination` with SQLite's online backup, while a
    /// hub may be using it; never overwrites. Opens nothing else: a directory without a database is an error.
    public static func backup(dataDirectory: String, to destination: String) throws -> BackupReport {
        let summary = try SQLiteStore.backup(directory: dataDirectory, to: destination)
        return BackupReport(
            source: summary.source, destination: summary.destination, bytes: summary.bytes,
            schema: summary.schema)
    }

    private func changingRole(_ change: () throws -> Bool) throws -> Bool {
        do {
            return try change()
        } catch RoleStoreError.noSuchUser(let name) {
            throw MaintenanceError.noSuchUser(name)
        }
    }
}
