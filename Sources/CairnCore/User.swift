// The account as every other part of Cairn sees it: the `{id, username, name}` triple of the contract plus
// whether it is a guest (guests cannot be found by search or befriended).

/// A user account.
public struct User: Sendable, Equatable, Hashable {
    /// The stable numeric id.
    public let id: Int64
    /// The unique login name (for guests a generated `guest-…` name that no registration can take).
    public let username: String
    /// The display name.
    public let name: String
    /// True for accounts made by `guest`.
    public let isGuest: Bool

    /// Creates a user value.
    public init(id: Int64, username: String, name: String, isGuest: Bool) {
        self.id = id
        self.username = username
        self.name = name
        self.isGuest = isGuest
    }
}
