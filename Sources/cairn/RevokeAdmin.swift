// `cairn user revoke-admin <username>`: takes the admin role away; every later `admin.*` request of the account is
// refused with `forbidden`. It is also the way to make an admin suspendable (admins cannot be suspended).
import ArgumentParser
import CairnApp

struct RevokeAdmin: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke-admin",
        abstract: "Take the admin role away from an account.")

    @Argument(help: "The account's username.")
    var username: String

    @OptionGroup var storage: StorageOptions

    func run() throws {
        try storage.changeRole({ try $0.revokeAdmin(username: username) }) { changed in
            changed ? "revoked admin from '\(username)'" : "'\(username)' did not have admin"
        }
    }
}
