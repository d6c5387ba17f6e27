// `cairn user`: account administration straight on a data directory, or on the PostgreSQL database several hubs
// share (`--storage-url`, `CAIRN_STORAGE_URL`, `storage.url` in the configuration file; see StorageOptions). It may
// run while hubs serve that same data (SQLite in WAL mode lets both write; PostgreSQL is shared anyway); the hubs
// read roles at each use, so changes count at once.
import ArgumentParser
import CairnApp

struct UserCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract:
            "Administer accounts in a data directory or the shared database (all but delete safe while hubs run).",
        subcommands: [
            UserCreate.self, UserList.self, UserSetPassword.self, UserSuspend.self, UserUnsuspend.self,
            UserDelete.self, GrantOps.self, RevokeOps.self, GrantAdmin.self, RevokeAdmin.self,
        ])
}

extension StorageOptions {
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
