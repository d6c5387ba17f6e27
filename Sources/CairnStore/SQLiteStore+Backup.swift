// Online backup: SQLite's backup API copies the database page by page inside one read transaction, so the copy is
// a consistent snapshot even while the hub keeps writing (WAL readers never block the writer, nor it them). The copy
// goes to a temporary file beside the destination, is checked with `PRAGMA integrity_check`, synced, and renamed
// into place, so a destination that exists is always a complete, valid database. It is created with mode 0600.
import Foundation
import GRDB

/// Why a backup was not made.
public enum StoreBackupError: Error, CustomStringConvertible {
    /// There is no database in the data directory.
    case noDatabase(String)
    /// The destination already exists (backups never overwrite).
    case destinationExists(String)
    /// The copy failed the integrity check.
    case integrity(String)
    /// SQLite or the file system failed.
    case failed(String)

    /// A readable explanation.
    public var description: String {
        switch self {
        case .noDatabase(let path): "no database at \(path)"
        case .destinationExists(let path): "\(path) already exists; choose a new file name"
        case .integrity(let detail): "the copy failed its integrity check: \(detail)"
        case .failed(let detail): detail
        }
    }
}

/// What a backup produced.
public struct StoreBackupSummary: Sendable {
    /// The database that was copied.
    public let source: String
    /// The backup file.
    public let destination: String
    /// Its size.
    public let bytes: Int
    /// The newest migration in the copy.
    public let schema: String
}

extension SQLiteStore {
    /// Copies the database of the data directory `directory` to the new file `destination`, while a hub may be
    /// using it. The result is a standalone database (journal mode DELETE) that the hub opens as its data file.
    ///
    /// Throws `StoreBackupError`.
    public static func backup(directory: String, to destination: String) throws -> StoreBackupSummary {
        let source = (directory as NSString).appendingPathComponent(fileName)
        let fm = FileManager.default
        guard fm.fileExists(atPath: source) else { throw StoreBackupError.noDatabase(source) }
        guard !fm.fileExists(atPath: destination) else { throw StoreBackupError.destinationExists(destination) }
        let partial = destination + ".partial-\(getpid())"
        defer { try? fm.removeItem(atPath: partial) }
        // A backup is the whole database: owner-only (0600) from its first byte, whatever the umask.
        let fd = open(partial, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StoreBackupError.failed("cannot create \(partial): \(String(cString: strerror(errno)))")
        }
        Glibc.close(fd)
        do {
            var sourceConfig = Configuration()
            sourceConfig.busyMode = .timeout(10)
            let reader = try DatabaseQueue(path: source, configuration: sourceConfig)
            let copy = try DatabaseQueue(path: partial)
            try reader.backup(to: copy)
            try reader.close()
            let (check, schema) = try copy.writeWithoutTransaction { db -> (String, String) in
                // A backup is a single file: leave WAL so no -wal/-shm companions are needed to read it.
                try db.execute(sql: "PRAGMA journal_mode = DELETE")
                let check = try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "; ")
                let schema = try Migrations.migrator.appliedMigrations(db).last ?? "none"
                return (check, schema)
            }
            try copy.close()
            guard check == "ok" else { throw StoreBackupError.integrity(check) }
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: partial))
            try handle.synchronize()
            try handle.close()
            guard link(partial, destination) == 0 else {
                // link(2) never replaces an existing file, unlike rename(2): a racing writer of `destination` wins.
                if errno == EEXIST { throw StoreBackupError.destinationExists(destination) }
                throw StoreBackupError.failed("cannot create \(destination): \(String(cString: strerror(errno)))")
            }
            let bytes = (try? fm.attributesOfItem(atPath: destination))?[.size] as? Int ?? 0
            return StoreBackupSummary(source: source, destination: destination, bytes: bytes, schema: schema)
        } catch {
            if error is StoreBackupError { throw error }
            throw StoreBackupError.failed("backup of \(source) failed: \(error)")
        }
    }
}
