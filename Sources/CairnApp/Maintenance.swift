// What the `cairn` command does to a data directory besides serving it: give or take the ops role (`cairn user
// grant-ops` / `revoke-ops`), write load-test fixtures (`cairn seed`), copy the database (`cairn backup`). It lives
// in the composition layer so the command line reaches the store, the domain and the crypto only through here, and
// it offers only what those commands need, in plain values and errors a command can print.
import CairnCrypto
import CairnDomain
import CairnStore

/// Why a maintenance operation could not do its job.
public enum MaintenanceError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No account has this username.
    case noSuchUser(String)
    /// An account with a username the seed would create exists already.
    case usernameTaken

    /// A readable explanation.
    public var description: String {
        switch self {
        case .noSuchUser(let name): "no user named '\(name)'"
        case .usernameTaken: "a username to be created is taken"
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

/// A data directory opened for maintenance; safe beside a hub serving the same directory (SQLite in WAL mode lets
/// both write, and the hub reads roles at each use).
public final class Maintenance: Sendable {
    private let store: SQLiteStore
    /// The data directory.
    public let dataDirectory: String

    /// Opens (creating if needed) the database in `dataDirectory`.
    public init(dataDirectory: String) throws {
        self.dataDirectory = dataDirectory
        store = try SQLiteStore(directory: dataDirectory)
    }

    /// Commits what is pending and closes the database.
    public func close() throws { try store.close() }

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

    /// Writes the plan's users, friendships and tokens (see `Fixtures`) and returns the tokens file's contents.
    /// Throws `MaintenanceError.usernameTaken` when a username it would create exists; nothing is written then.
    public func seed(_ plan: FixturePlan) async throws -> FixtureFile {
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
        return BackupReport(source: summary.source, destination: summary.destination, bytes: summary.bytes,
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
