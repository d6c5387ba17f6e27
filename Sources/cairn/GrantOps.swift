// `cairn user grant-ops <username>`: gives an account the ops role, which lets it watch the live stats channel
// (`stats.watch`, `cairn stats`). A running hub sees the grant at the account's next `stats.watch`.
import ArgumentParser
import CairnApp

struct GrantOps: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grant-ops",
        abstract: "Give an account the ops role (may watch the stats channel).")

    @Argument(help: "The account's username.")
    var username: String

    @OptionGroup var storage: StorageOptions

    func run() throws {
        try storage.changeRole({ try $0.grantOps(username: username) }) { changed in
            changed ? "granted ops to '\(username)'" : "'\(username)' already has ops"
        }
    }
}
