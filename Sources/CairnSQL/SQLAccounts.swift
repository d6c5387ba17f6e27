// What several ports read the same way from the accounts' table.
import CairnCore
import CairnSessions

enum SQLAccounts {
    /// A user from a row with the columns id, username, name, is_guest.
    static func user(_ row: SQLRow) -> User {
        User(id: row["id"], username: row["username"], name: row["name"], isGuest: row["is_guest"])
    }
}
