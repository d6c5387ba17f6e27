// `cairn user grant-ops <username>`: gives an account the ops role, which lets it watch the live stats channel
// (`stats.watch`, `cairn stats`). A running hub sees the grant at the account's next `stats.watch`.
import ArgumentParser
import CairnDomain
import CairnStore
import Foundation

struct GrantOps: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grant-ops",
        abstract: "Give an account the ops role (may watch the stats channel).")

    @Argument(help: "The account's username.")
    var username: String

    @OptionGroup var directory: DataDirectoryOption

    func run() throws {
        let store = try SQLiteStore(directory: try directory.resolve())
        defer { try? store.close() }
        do {
            let changed = try store.grantRole(.ops, username: username, at: SystemClock().now())
            print(changed ? "granted ops to '\(username)'" : "'\(username)' already has ops")
        } catch let error as RoleStoreError {
            throw CommandFailure(error.description)
        }
    }
}
