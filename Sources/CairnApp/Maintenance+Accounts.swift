// The operator's account commands (`cairn user create`, `list`, `set-password`, `suspend`, `unsuspend`, `delete`),
// on a data directory's SQLite or the shared PostgreSQL database alike. They keep the protocol's rules: usernames,
// passwords and names are checked as `register` checks them (`Accounts`), and a suspension is what `admin.suspend`
// writes (same reason rules, same row, the same audit line with the command line as its admin, and no admin can be
// suspended). Written straight to the store: a running hub learns of a suspension at the account's next sign-in
// (its open connections stay until they close), and refuses the deleted account's and the old password's tokens
// at their next use; it keeps a deleted account's friendships in memory until it restarts, so `delete` runs on a
// data directory only with the hub stopped (it takes the directory's lock).
public import CairnAdmin
public import CairnCore
import CairnCrypto
public import CairnSessions
import Foundation

/// An account as `cairn user list` shows it.
public typealias AccountListing = AdminUserRow

/// What `cairn user delete` removed, counted before it went.
public struct AccountDeletion: Sendable, Equatable {
    /// The account.
    public var user: User
    /// Its friendships.
    public var friends: Int
    /// Buckets it belonged to (the ones it alone owned went, with their items).
    public var buckets: Int
    /// Relics it had left.
    public var relics: Int
    /// Pictures it had posted.
    public var pictures: Int
}

extension MaintenanceError {
    /// The command line's admin in the audit log (no account has id 0).
    static let commandLineAdmin = User(id: 0, username: "cairn-user-command", name: "cairn user", isGuest: false)
}

extension Maintenance {
    /// The rules `register` applies, for checking what an operator types.
    private static let rules = Accounts(
        store: NoAccounts(), hasher: hasher, random: SecureRandom(), clock: SystemClock())

    /// Creates an account with `password` (checked as `register` checks it); throws `invalid` for a bad username,
    /// password or name, or a username that is taken. Committed on return.
    public func createUser(username: String, password: String, name: String?) async throws -> User {
        let displayName: String
        do throws(DomainError) {
            try Self.rules.validateUsername(username)
            try Self.rules.validatePassword(password)
            displayName = try Self.rules.normalizedName(name, username: username)
        } catch { throw MaintenanceError.invalid(error.message) }
        let hash = await Self.hasher.hash(password)
        do {
            return try await store.createUser(
                NewUser(
                    username: username, name: displayName, passwordHash: hash, isGuest: false,
                    createdAt: SystemClock().now()))
        } catch AccountStoreError.usernameTaken {
            throw MaintenanceError.invalid("username '\(username)' is taken")
        }
    }

    /// Every account in username order (guests only with `guests`), with role and suspension.
    public func listUsers(guests: Bool) async throws -> [AccountListing] {
        var rows: [AccountListing] = []
        let now = SystemClock().now()
        while true {
            let query = AdminUserQuery(prefix: nil, after: rows.last?.user.username, guests: guests, limit: 500)
            let page = try await store.adminUsers(query, now: now)
            rows += page
            if page.count < 500 { return rows }
        }
    }

    /// Sets the account's password (checked as `register` checks it) and deletes its tokens, so every device signs
    /// in again; answers how many tokens went.
    public func setPassword(username: String, password: String) async throws -> Int {
        do throws(DomainError) { try Self.rules.validatePassword(password) } catch {
            throw MaintenanceError.invalid(error.message)
        }
        let user = try await account(username)
        guard !user.isGuest else { throw MaintenanceError.invalid("'\(username)' is a guest: it has no password") }
        guard let revoked = try await store.setPassword(userID: user.id, hash: await Self.hasher.hash(password))
        else { throw MaintenanceError.noSuchUser(username) }
        return revoked
    }

    /// Suspends the account as `admin.suspend` does (reason rules, audit line, admins refused); `seconds` nil: until
    /// lifted. Answers the suspension written.
    public func suspend(username: String, reason rawReason: String, seconds: Int64?) async throws -> Suspension {
        let reason = rawReason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !reason.isEmpty else { throw MaintenanceError.invalid("the reason must not be empty") }
        guard reason.utf8.count <= Administration.maxReasonBytes else {
            throw MaintenanceError.invalid("the reason must be at most \(Administration.maxReasonBytes) bytes")
        }
        guard !reason.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw MaintenanceError.invalid("the reason must not contain control characters")
        }
        if let seconds, !(1...Administration.maxSuspensionSeconds).contains(seconds) {
            throw MaintenanceError.invalid("--for must be 1–\(Administration.maxSuspensionSeconds) seconds")
        }
        let user = try await account(username)
        if try await store.hasRole(.admin, userID: user.id) {
            throw MaintenanceError.invalid("an admin cannot be suspended; revoke the role first (revoke-admin)")
        }
        let now = SystemClock().now()
        let suspension = Suspension(reason: reason, since: now, until: seconds.map { now + $0 * 1000 })
        let audit = AuditEntry(
            at: now, admin: MaintenanceError.commandLineAdmin, action: "user.suspend", targetKind: "user",
            targetID: user.id, targetName: user.username, reason: reason,
            detail: suspension.until.map { "until=\($0)" } ?? "until=lifted")
        try await store.suspend(userID: user.id, suspension, audit: audit)
        return suspension
    }

    /// Lifts the account's suspension, audited as `admin.unsuspend` is; false when it had none.
    public func unsuspend(username: String) async throws -> Bool {
        let user = try await account(username)
        let audit = AuditEntry(
            at: SystemClock().now(), admin: MaintenanceError.commandLineAdmin, action: "user.unsuspend",
            targetKind: "user", targetID: user.id, targetName: user.username, reason: nil, detail: nil)
        return try await store.unsuspend(userID: user.id, audit: audit)
    }

    /// Deletes the account and everything that hangs off it, and says what that was. On a data directory it needs
    /// `exclusive` access (a running hub keeps friendships in memory); the shared database cannot be locked, so
    /// there the operator stops the hubs first.
    public func deleteUser(username: String) async throws -> AccountDeletion {
        if !isShared && !hasLock { throw MaintenanceError.needsExclusiveAccess }
        let user = try await account(username)
        guard let row = try await store.adminUser(id: user.id, now: SystemClock().now()) else {
            throw MaintenanceError.noSuchUser(username)
        }
        guard try await store.deleteAccount(userID: user.id) else { throw MaintenanceError.noSuchUser(username) }
        return AccountDeletion(
            user: user, friends: row.friends, buckets: row.buckets, relics: row.relics, pictures: row.pictures)
    }

    private static let hasher = PasswordHasher(workers: 1, random: SecureRandom())

    private func account(_ username: String) async throws -> User {
        guard let user = try await store.credentials(username: username)?.user else {
            throw MaintenanceError.noSuchUser(username)
        }
        return user
    }
}

/// A store that holds nothing: `Accounts` is used here only for its pure checks.
private struct NoAccounts: AccountStore {
    func createUser(_ user: NewUser) async throws -> User { throw MaintenanceError.needsExclusiveAccess }
    func credentials(username: String) async throws -> StoredCredentials? { nil }
    func credentials(email: String) async throws -> StoredCredentials? { nil }
    func suspension(userID: Int64, now: Int64) async throws -> Suspension? { nil }
    func insertToken(hash: [UInt8], userID: Int64, createdAt: Int64) async throws {}
    func user(tokenHash: [UInt8], issuedAfter: Int64?) async throws -> User? { nil }
    func deleteToken(hash: [UInt8]) async throws -> Bool { false }
    func deleteTokens(userID: Int64) async throws -> Int { 0 }
    func markSeen(userIDs: [Int64], at: Int64) async throws {}
    func purgeGuests(seenBefore cutoff: Int64, sparing: Set<Int64>) async throws -> GuestPurge { GuestPurge() }
}

extension Maintenance {
    /// A new random password for an operator to hand on: 16 characters of base64url (96 bits).
    public static func generatedPassword() -> String {
        Data(SecureRandom().bytes(12)).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }
}
