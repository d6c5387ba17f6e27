// `cairn user grant-admin <username>`: gives an account the admin role, which lets it use the `admin.*` ops
// (browse users, suspend them). A running hub sees the grant at the account's next admin request.
import ArgumentParser
import CairnApp

struct GrantAdmin: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grant-admin",
        abstract: "Give an account the admin role (may browse and suspend users).")

    @Argument(help: "The account's username.")
    var username: String

    @OptionGroup var storage: StorageOptions

    func run() throws {
        try storage.changeRole({ try $0.grantAdmin(username: username) }) { changed in
            changed ? "granted admin to '\(username)'" : "'\(username)' already has admin"
        }
    }
}
