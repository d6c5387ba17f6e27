// What the accounts service needs from durable storage, stated as a protocol so the domain knows nothing of SQLite.
// Every method returns only after its write is committed: a reply that depends on it can then be sent safely.
public import CairnCore

/// A new account to insert.
public struct NewUser: Sendable {
    /// Unique login name.
    public var username: String
    /// Display name.
    public var name: String
    /// Encoded password record, nil for guests.
    public var passwordHash: String?
    /// True for guest accounts.
    public var isGuest: Bool
    /// Creation time, ms since the epoch.
    public var createdAt: Int64
    /// The email address, lower-cased (`Accounts.normalizedEmail`), unique among accounts that have one.
    public var email: String?

    /// Creates the value.
    public init(
        username: String, name: String, passwordHash: String?, isGuest: Bool, createdAt: Int64,
        email: String? = nil
    ) {
        self.username = username
        self.name = name
        self.passwordHash = passwordHash
        self.isGuest = isGuest
        self.createdAt = createdAt
        self.email = email
    }
}

/// A user together with the stored password record, for login.
public struct StoredCredentials: Sendable {
    /// The account.
    public var user: User
    /// The encoded password record (nil for guests, who cannot log in by password).
    public var passwordHash: String?

    /// Creates the value.
    public init(user: User, passwordHash: String?) {
        self.user = user
        self.passwordHash = passwordHash
    }
}

/// Errors a store reports that the domain turns into protocol errors.
public enum AccountStoreError: Error, Equatable, Sendable {
    /// The username is already registered.
    case usernameTaken
    /// The email address is already registered.
    case emailTaken
}

/// What a guest purge removed: the accounts, and the relics they had left (memory must forget those).
public struct GuestPurge: Sendable, Equatable {
    /// The deleted guest accounts.
    public var users: [Int64]
    /// The relics those guests had created, deleted with them.
    public var relics: [Int64]
    /// The items of buckets whose every owner was purged: the buckets went, and their items with them.
    public var items: [Int64]

    /// Creates the value.
    public init(users: [Int64] = [], relics: [Int64] = [], items: [Int64] = []) {
        self.users = users
        self.relics = relics
        self.items = items
    }
}

/// Durable storage for accounts and session tokens.
public protocol AccountStore: Sendable {
    /// Inserts an account; throws `AccountStoreError.usernameTaken` when the name exists, `.emailTaken` when the
    /// email does.
    func createUser(_ user: NewUser) async throws -> User
    /// Finds an account by exact username.
    func credentials(username: String) async throws -> StoredCredentials?
    /// Finds an account by its (lower-cased) email address.
    func credentials(email: String) async throws -> StoredCredentials?
    /// The account's suspension in force at `now` (ms since the epoch), if any.
    func suspension(userID: Int64, now: Int64) async throws -> Suspension?
    /// Stores the SHA-256 digest of a new session token.
    func insertToken(hash: [UInt8], userID: Int64, createdAt: Int64) async throws
    /// The account a token digest belongs to, if the token is live: stored, and when `issuedAfter` is given,
    /// created after that time (ms since the epoch; older tokens have expired).
    func user(tokenHash: [UInt8], issuedAfter: Int64?) async throws -> User?
    /// Revokes a token; true if it existed.
    func deleteToken(hash: [UInt8]) async throws -> Bool
    /// Revokes every token of an account; returns how many there were.
    func deleteTokens(userID: Int64) async throws -> Int
    /// Records that these accounts were connected at `at` (ms since the epoch): their last activity.
    func markSeen(userIDs: [Int64], at: Int64) async throws
    /// Deletes the guest accounts last seen before `cutoff` (ms since the epoch), except those in `sparing`, with
    /// everything that is theirs (tokens, friendships and requests, share rules, positions and history, relics,
    /// chat, media rows, roles); one transaction per batch.
    func purgeGuests(seenBefore cutoff: Int64, sparing: Set<Int64>) async throws -> GuestPurge
}

extension AccountStore {
    /// The account a token digest belongs to, whatever the token's age.
    public func user(tokenHash: [UInt8]) async throws -> User? {
        try await user(tokenHash: tokenHash, issuedAfter: nil)
    }
}
