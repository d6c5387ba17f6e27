// `cairn user`: account administration straight on a data directory. It may run while a hub serves that same
// directory (SQLite in WAL mode lets both write); the hub reads roles at each use, so changes count at once.
import ArgumentParser
import CairnApp

struct UserCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Administer accounts in a data directory (safe while the hub runs).",
        subcommands: [GrantOps.self, RevokeOps.self, GrantAdmin.self, RevokeAdmin.self])
}

/// The data-directory option shared by the `user` subcommands.
struct DataDirectoryOption: ParsableArguments {
    @Option(help: "Data directory holding cairn.sqlite. [env: CAIRN_DATA] (default: ./data)")
    var data: String?

    func resolve() -> String { Environment().resolve(data, "CAIRN_DATA", default: "./data") }

    /// These commands work on a data directory's SQLite: with hubs on PostgreSQL (`CAIRN_STORAGE_URL` set) they
    /// would change a database no hub reads, so they refuse and say what to do instead.
    func refuseSharedStore(_ command: String) throws {
        guard let url = Environment().values["CAIRN_STORAGE_URL"], !url.isEmpty else { return }
        throw CommandFailure(
            "\(command) works on a data directory's SQLite, but CAIRN_STORAGE_URL is set: the hubs keep their "
                + "data in PostgreSQL. Use SQL there (docs/OPERATIONS.md, \"Several nodes\"), or unset "
                + "CAIRN_STORAGE_URL for a single hub's data directory.")
    }
}

extension DataDirectoryOption {
    /// Opens the data directory, runs one role change and prints what `report` makes of its result; an unknown
    /// user is a command failure (exit 1) naming the user.
    func changeRole(_ change: (Maintenance) throws -> Bool, report: (Bool) -> String) throws {
        CommandLogging.bootstrap()
        try refuseSharedStore("cairn user")
        let data: Maintenance
        do {
            data = try Maintenance(dataDirectory: resolve(), access: .besideHub)
        } catch {
            throw CommandFailure("\(error)")
        }
        defer { try? data.close() }
        do {
            print(report(try change(data)))
        } catch let error as MaintenanceError {
            throw CommandFailure(error.description)
        }
    }
}
