// `cairn backup`: a consistent copy of the SQLite database taken with SQLite's online backup while the hub keeps
// running. The data directory is found like `serve` finds it (--data, CAIRN_DATA, the configuration file, default;
// see StorageOptions), so `cairn backup --config /etc/cairn/cairn.toml --out FILE` works next to a deployed hub.
// Restoring is described in docs/OPERATIONS.md. Hubs on PostgreSQL (`--storage-url`, `CAIRN_STORAGE_URL`,
// `storage.url` in the file) keep nothing to copy here: the command says to use pg_dump, and exits 1.
import ArgumentParser
import CairnApp
import CairnConfig
import Foundation

struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy the database to a file with SQLite's online backup (safe while the hub runs).",
        discussion: "The copy is written next to --out, checked with PRAGMA integrity_check, synced, and only then "
            + "renamed to --out; an existing --out is never overwritten. Media files (<data>/media/ and media.key) "
            + "are not in the database: copy them as well (see docs/OPERATIONS.md).")

    @OptionGroup var storage: StorageOptions

    @Option(help: "The backup file to create.")
    var out: String

    func run() throws {
        // Whatever else names a data directory, a storage URL in force means there is nothing here to copy.
        let resolved = try storage.settings()
        try StorageOptions.requireHubData(resolved)
        let settings = resolved.app
        let directory = settings.dataDirectory
        if settings.storage.url != nil {
            FileHandle.standardError.write(
                Data(
                    ("cairn backup: storage.url is set: the hubs keep their data in PostgreSQL, not in \(directory); "
                        + "back it up with pg_dump (docs/OPERATIONS.md, \"Backing up PostgreSQL\")\n").utf8))
            throw ExitCode(1)
        }
        do {
            let summary = try Maintenance.backup(dataDirectory: directory, to: out)
            print(
                "backed up \(summary.source) to \(summary.destination): \(summary.bytes) bytes, schema "
                    + "\(summary.schema)"
            )
        } catch {
            FileHandle.standardError.write(Data("cairn backup: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
