// `cairn user`: account administration straight on a data directory, or on the PostgreSQL database several hubs
// share (`--storage-url`, `CAIRN_STORAGE_URL`). It may run while hubs serve that same data (SQLite in WAL mode lets
// both write; PostgreSQL is shared anyway); the hubs read roles at each use, so changes count at once.
import ArgumentParser
import CairnApp

struct UserCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Administer accounts in a data directory (safe while the hub runs).",
        subcommands: [GrantOps.self, RevokeOps.self, GrantAdmin.self, RevokeAdmin.self])
}

/// Where the `user` and `places` subcommands find the data: a data directory, or a shared PostgreSQL database.
struct DataDirectoryOption: ParsableArguments {
    @Option(help: "Data directory holding cairn.sqlite. [env: CAIRN_DATA] (default: ./data)")
    var data: String?

    @Option(
        name: .customLong("storage-url"),
        help: "PostgreSQL database the hubs share (storage.url), instead of a data directory. [env: CAIRN_STORAGE_URL]")
    var storageURL: String?

    func resolve() -> String { Environment().resolve(data, "CAIRN_DATA", default: "./data") }

    /// The PostgreSQL URL to work on (the flag, else `CAIRN_STORAGE_URL`), or nil for a data directory's SQLite.
    /// Both a URL and `--data` is refused: whichever was meant, the other would change data no hub reads.
    func resolvedStorageURL() throws -> String? {
        let env = Environment().values["CAIRN_STORAGE_URL"].flatMap { $0.isEmpty ? nil : $0 }
        guard let url = storageURL ?? env else { return nil }
        if data != nil {
            throw CommandFailure(
                "both --data and a storage URL (\(storageURL != nil ? "--storage-url" : "CAIRN_STORAGE_URL")) are "
                    + "given: the hubs keep their data in one of them; give only that one")
        }
        return url
    }

    /// Opens the shared database when a storage URL is given, else the data directory with `access`; any failure
    /// is a command failure (exit 1) saying why.
    func open(_ access: MaintenanceAccess) throws -> Maintenance {
        do {
            if let url = try resolvedStorageURL() { return try Maintenance(storageURL: url) }
            return try Maintenance(dataDirectory: resolve(), access: access)
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure("\(error)")
        }
    }
}

extension DataDirectoryOption {
    /// Opens the data directory or database, runs one role change and prints what `report` makes of its result; an
    /// unknown user is a command failure (exit 1) naming the user.
    func changeRole(_ change: (Maintenance) throws -> Bool, report: (Bool) -> String) throws {
        CommandLogging.bootstrap()
        let data = try open(.besideHub)
        defer { try? data.close() }
        do {
            print(report(try change(data)))
        } catch let error as MaintenanceError {
            throw CommandFailure(error.description)
        }
    }
}
