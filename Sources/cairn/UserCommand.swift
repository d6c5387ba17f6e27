// `cairn user`: account administration straight on a data directory. It may run while a hub serves that same
// directory (SQLite in WAL mode lets both write); the hub reads roles at each use, so changes count at once.
import ArgumentParser

struct UserCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Administer accounts in a data directory (safe while the hub runs).",
        subcommands: [GrantOps.self, RevokeOps.self])
}

/// The data-directory option shared by the `user` subcommands.
struct DataDirectoryOption: ParsableArguments {
    @Option(help: "Data directory holding cairn.sqlite. [env: CAIRN_DATA] (default: ./data)")
    var data: String?

    func resolve() throws -> String { try Environment().resolve(data, "CAIRN_DATA", default: "./data") }
}
