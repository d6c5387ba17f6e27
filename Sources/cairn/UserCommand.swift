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
}

extension DataDirectoryOption {
    /// Opens the data directory, runs one role change and prints what `report` makes of its result; an unknown
    /// user is a command failure (exit 1) naming the user.
    func changeRole(_ change: (Maintenance) throws -> Bool, report: (Bool) -> String) throws {
        CommandLogging.bootstrap()
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
