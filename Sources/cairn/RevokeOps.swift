// `cairn user revoke-ops <username>`: takes the ops role away. A connection already watching the stats channel
// keeps its watch until it unwatches or disconnects; every later `stats.watch` is refused.
import ArgumentParser
import CairnDomain
import CairnStore

struct RevokeOps: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke-ops",
        abstract: "Take the ops role away from an account.")

    @Argument(help: "The account's username.")
    var username: String

    @OptionGroup var directory: DataDirectoryOption

    func run() throws {
        let store = try SQLiteStore(directory: try directory.resolve())
        defer { try? store.close() }
        do {
            let changed = try store.revokeRole(.ops, username: username)
            print(changed ? "revoked ops from '\(username)'" : "'\(username)' did not have ops")
        } catch let error as RoleStoreError {
            throw CommandFailure(error.description)
        }
    }
}
