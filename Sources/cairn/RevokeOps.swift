// `cairn user revoke-ops <username>`: takes the ops role away. A connection already watching the stats channel
// keeps its watch until it unwatches or disconnects; every later `stats.watch` is refused.
import ArgumentParser
import CairnApp

struct RevokeOps: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke-ops",
        abstract: "Take the ops role away from an account.")

    @Argument(help: "The account's username.")
    var username: String

    @OptionGroup var storage: StorageOptions

    func run() throws {
        try storage.changeRole({ try $0.revokeOps(username: username) }) { changed in
            changed ? "revoked ops from '\(username)'" : "'\(username)' did not have ops"
        }
    }
}
