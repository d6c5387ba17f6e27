// Roles beyond the ordinary user, held in durable storage and checked off the loop each time they matter, so a
// role granted or revoked from the command line while the hub runs takes effect at the next request without a
// restart and without the hub caching anything. Today there is one role: `ops`, which may watch the stats channel.

/// A privilege granted to an account by an operator.
public enum UserRole: String, Sendable, CaseIterable {
    /// May watch the live stats channel (`stats.watch`).
    case ops
}

/// Durable storage of roles.
public protocol RoleStore: Sendable {
    /// True when `userID` currently holds `role`.
    func hasRole(_ role: UserRole, userID: Int64) async throws -> Bool
}
