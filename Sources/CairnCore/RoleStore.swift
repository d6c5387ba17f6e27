// Roles beyond the ordinary user, held in durable storage and checked off the loop each time they matter, so a
// role granted or revoked from the command line while the hub runs takes effect at the next request without a
// restart and without the hub caching anything. Two roles: `ops`, which may watch the stats channel, and `admin`,
// which may use the `admin.*` ops (browse users, suspend them).

/// A privilege granted to an account by an operator.
public enum UserRole: String, Sendable, CaseIterable {
    /// May watch the live stats channel (`stats.watch`).
    case ops
    /// May use the `admin.*` ops (docs/PROTOCOL.md, Administration).
    case admin
}

/// Durable storage of roles.
public protocol RoleStore: Sendable {
    /// True when `userID` currently holds `role`.
    func hasRole(_ role: UserRole, userID: Int64) async throws -> Bool
}

/// Errors raised when changing roles (by either store, so the command line tells an unknown name the same way).
public enum RoleStoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No account has this username.
    case noSuchUser(String)

    /// A readable explanation.
    public var description: String {
        switch self {
        case .noSuchUser(let name): "no user named '\(name)'"
        }
    }
}
