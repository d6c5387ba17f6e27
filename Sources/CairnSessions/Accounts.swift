// Registration, login, guests, token authentication and logout. This is where the account rules of the contract
// live (username alphabet and length, password length, "Login failed"), where tokens are minted (256 bits from the
// injected random source, handed to the client once, stored only as their SHA-256 digest, optionally expiring
// `tokenLifetimeMs` after they were minted) and where failed logins are throttled per username and per connection.
// It is Sendable and async: callers on the event loop start an operation and get the result back without ever
// blocking on scrypt or SQLite.
public import CairnCore
public import CairnCrypto
import CairnErrorCodes
public import Logging

/// A logged-in session: the account and the bearer token that proves it.
public struct Session: Sendable, Equatable {
    /// The account.
    public let user: User
    /// The bearer token (base64url of 32 random bytes); shown once, stored only as its digest.
    public let token: String
}

/// Limits applied to account requests.
public struct AccountRules: Sendable {
    /// Username length in characters.
    public var usernameLength = 3...32
    /// Minimum password length in characters.
    public var minPasswordLength = 8
    /// Maximum password size in UTF-8 bytes (guards the hasher against huge inputs).
    public var maxPasswordBytes = 1024
    /// Maximum display-name length in bytes of UTF-8.
    public var maxNameLength = 64
    /// Maximum email length in bytes (RFC 5321's limit on a path).
    public var maxEmailLength = 254
    /// Failed logins allowed per username from one source address within `failureWindowMs`.
    public var failuresPerUsername = 5
    /// Failed logins allowed per username from all the source addresses that never logged in as that user, together,
    /// within `failureWindowMs`. A source that has logged in as the user before is not held by this limit, so
    /// guesses from elsewhere cannot lock the owner out.
    public var failuresPerUsernameFromNewSources = 50
    /// Failed logins allowed per connection within `failureWindowMs`.
    public var failuresPerConnection = 10
    /// The sliding window for failed logins, in milliseconds (default 15 minutes).
    public var failureWindowMs: Int64 = 15 * 60 * 1000
    /// Age in milliseconds at which a token stops authenticating; nil (the default): tokens never expire.
    public var tokenLifetimeMs: Int64?

    /// The defaults above.
    public init() {}
}

/// The account service.
public final class Accounts: Sendable {
    package let store: any AccountStore
    package let hasher: PasswordHasher
    private let random: any RandomSource
    private let clock: any Clock
    private let bySource: LoginLimiter
    private let byUsername: LoginLimiter
    private let byConnection: LoginLimiter
    private let knownSources = KnownSources()
    private let logger: Logger
    /// The limits in force.
    public let rules: AccountRules

    /// Creates the service over a store, a hasher pool, a random source and a clock.
    public init(
        store: any AccountStore, hasher: PasswordHasher, random: any RandomSource, clock: any Clock,
        rules: AccountRules = AccountRules(), logger: Logger = Logger(label: "cairn.accounts")
    ) {
        self.store = store
        self.hasher = hasher
        self.random = random
        self.clock = clock
        self.rules = rules
        self.logger = logger
        self.bySource = LoginLimiter(limit: rules.failuresPerUsername, windowMs: rules.failureWindowMs)
        self.byUsername = LoginLimiter(limit: rules.failuresPerUsernameFromNewSources, windowMs: rules.failureWindowMs)
        self.byConnection = LoginLimiter(limit: rules.failuresPerConnection, windowMs: rules.failureWindowMs)
    }

    // MARK: Validation (pure, cheap)

    /// Checks a username against the contract: 3–32 characters of `[a-z0-9_.]`.
    public func validateUsername(_ username: String) throws(DomainError) {
        let bytes = username.utf8
        guard rules.usernameLength.contains(bytes.count) else {
            throw .badRequest(
                "field 'username' must be "
                    + "\(rules.usernameLength.lowerBound)–\(rules.usernameLength.upperBound) characters"
            )
        }
        for b in bytes where !((b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == 0x5F || b == 0x2E) {
            throw .badRequest("field 'username' may contain only a-z, 0-9, '_' and '.'")
        }
    }

    /// Checks a new password: at least `minPasswordLength` characters, at most `maxPasswordBytes` bytes.
    public func validatePassword(_ password: String) throws(DomainError) {
        guard password.count >= rules.minPasswordLength else {
            throw .badRequest("field 'password' must be at least \(rules.minPasswordLength) characters")
        }
        guard password.utf8.count <= rules.maxPasswordBytes else {
            throw .badRequest("field 'password' must be at most \(rules.maxPasswordBytes) bytes")
        }
    }

    /// Normalises a display name: trimmed, 1–`maxNameLength` bytes of UTF-8, no control characters and nothing
    /// that changes how the text around it reads without being seen (`NameText`); nil → username.
    public func normalizedName(_ name: String?, username: String) throws(DomainError) -> String {
        guard let name else { return username }
        let trimmed = name.trimmingWhitespace()
        guard !trimmed.isEmpty else { throw .badRequest("field 'name' must not be empty") }
        guard trimmed.utf8.count <= rules.maxNameLength else {
            throw .badRequest("field 'name' must be at most \(rules.maxNameLength) bytes (UTF-8)")
        }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .badRequest("field 'name' must not contain control characters")
        }
        if let problem = NameText.invisibleProblem(in: trimmed) { throw .badRequest("field 'name' \(problem)") }
        return trimmed
    }

    /// Checks an email address and returns it lower-cased (the form stored and compared). A syntactic check, no
    /// more: `local@domain`, at most `maxEmailLength` bytes of printable ASCII, a local part of 1–64 bytes without
    /// spaces, quotes or a second `@`, and a domain of dot-separated labels of letters, digits and inner hyphens,
    /// at least two of them. Whether the mailbox exists is not checked (no mail is sent).
    public func normalizedEmail(_ email: String, field: String = "email") throws(DomainError) -> String {
        let lowered = email.lowercased()
        let bytes = Array(lowered.utf8)
        guard !bytes.isEmpty, bytes.count <= rules.maxEmailLength else {
            throw .badRequest("field '\(field)' must be 1–\(rules.maxEmailLength) bytes")
        }
        let problem = DomainError.badRequest("field '\(field)' must be an email address like name@example.org")
        guard let at = bytes.firstIndex(of: 0x40), bytes.lastIndex(of: 0x40) == at else { throw problem }
        let local = bytes[..<at]
        let domain = bytes[(at + 1)...]
        guard (1...64).contains(local.count), local.first != 0x2E, local.last != 0x2E else { throw problem }
        // Printable ASCII without space, quotes, angle brackets, parentheses, commas, colons, semicolons, backslash.
        let forbidden: Set<UInt8> = [0x22, 0x28, 0x29, 0x2C, 0x3A, 0x3B, 0x3C, 0x3E, 0x5B, 0x5C, 0x5D]
        guard local.allSatisfy({ $0 > 0x20 && $0 < 0x7F && !forbidden.contains($0) }) else { throw problem }
        let labels = domain.split(separator: 0x2E, omittingEmptySubsequences: false)
        guard labels.count >= 2 else { throw problem }
        for label in labels {
            guard (1...63).contains(label.count), label.first != 0x2D, label.last != 0x2D,
                label.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D })
            else { throw problem }
        }
        return lowered
    }

    // MARK: Operations

    /// Creates an account and a session for it. `email`, when given, is checked and stored lower-cased; one taken
    /// by another account is refused with `username_taken` (the contract's code for a login name in use: the
    /// email is one too, since `login` accepts it).
    public func register(
        username: String, password: String, name: String?, email: String? = nil
    ) async throws(DomainError) -> Session {
        try validateUsername(username)
        try validatePassword(password)
        let display = try normalizedName(name, username: username)
        let address = try email.map { (e) throws(DomainError) in try normalizedEmail(e) }
        let encoded = await hasher.hash(password)
        let user: User
        do {
            user = try await store.createUser(
                NewUser(
                    username: username, name: display, passwordHash: encoded,
                    isGuest: false, createdAt: clock.now(), email: address))
        } catch AccountStoreError.usernameTaken {
            throw DomainError(.usernameTaken, "Username '\(username)' is already taken")
        } catch AccountStoreError.emailTaken {
            throw DomainError(.usernameTaken, "Email '\(address ?? "")' is already registered")
        } catch {
            throw storageFailure(error, "register")
        }
        return try await openSession(for: user)
    }

    /// Logs in by username (or email: text with an `@`, which no username has) and password. `connection`
    /// identifies the caller's connection and `source` its address (nil when unknown), for throttling: failures
    /// count per (login name, source), per connection, and — unless `source` has logged in with this name before —
    /// per name across new sources. The name is checked before anything is keyed on it. A suspended account is
    /// refused with `suspended` once the password is right (so the refusal reveals nothing to a guesser).
    public func login(
        username rawUsername: String, password: String, connection: UInt64,
        source: String? = nil
    ) async throws(DomainError) -> Session {
        let byEmail = rawUsername.utf8.contains(0x40)
        let username = byEmail ? try normalizedEmail(rawUsername, field: "username") : rawUsername.lowercased()
        if !byEmail { try validateUsername(username) }
        guard password.utf8.count <= rules.maxPasswordBytes else {
            throw .badRequest("field 'password' must be at most \(rules.maxPasswordBytes) bytes")
        }
        // Attempts count before the (slow) check, so parallel attempts cannot all pass the limits at once; they
        // are withdrawn if the password turns out right.
        let now = clock.now()
        var counted: [(LoginLimiter, String)] = []
        func take(_ limiter: LoginLimiter, _ key: String) throws(DomainError) {
            if let wait = limiter.attempt(key, now: now) {
                for (l, k) in counted { l.forgive(k, at: now) }
                throw Self.throttled(wait)
            }
            counted.append((limiter, key))
        }
        try take(bySource, "\(username)|\(source ?? "-")")
        if !knownSources.contains(source, for: username) { try take(byUsername, username) }
        try take(byConnection, "conn:\(connection)")
        let found: StoredCredentials?
        do {
            found =
                byEmail
                ? try await store.credentials(email: username) : try await store.credentials(username: username)
        } catch {
            for (l, k) in counted { l.forgive(k, at: now) }
            throw storageFailure(error, "login")
        }
        // Unknown users cost a decoy verification too, so timing does not reveal which usernames exist.
        let ok = await hasher.verify(password, against: found?.passwordHash)
        guard ok, let user = found?.user else { throw DomainError(.invalidCredentials, "Login failed") }
        for (l, k) in counted { l.forgive(k, at: now) }
        knownSources.remember(source, for: username)
        try await refuseIfSuspended(user, "login")
        return try await openSession(for: user)
    }

    /// Creates a guest account and a session for it.
    public func guest() async throws(DomainError) -> Session {
        // The hyphen is outside the registration alphabet, so a guest name can never collide with a real one.
        let suffix = random.bytes(6).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        let username = "guest-\(suffix)"
        let user: User
        do {
            user = try await store.createUser(
                NewUser(
                    username: username, name: "Guest", passwordHash: nil,
                    isGuest: true, createdAt: clock.now()))
        } catch {
            throw storageFailure(error, "guest")
        }
        return try await openSession(for: user)
    }

    /// Resolves a bearer token to its account; `unauthorized` when it is malformed, unknown, revoked or older than
    /// `rules.tokenLifetimeMs`.
    public func authenticate(token: String) async throws(DomainError) -> User {
        guard let digest = Self.tokenDigest(token) else { throw Self.invalidToken }
        let issuedAfter = rules.tokenLifetimeMs.map { clock.now() - $0 }
        let user: User?
        do { user = try await store.user(tokenHash: digest, issuedAfter: issuedAfter) } catch {
            throw storageFailure(error, "auth")
        }
        guard let user else { throw Self.invalidToken }
        try await refuseIfSuspended(user, "auth")
        return user
    }

    /// Why the store would refuse `token` now, whatever its age (a connection keeps a token it authenticated with
    /// until it closes, so only a revocation or a suspension counts): `.tokenRevoked`, `.suspended`, or nil when it
    /// still holds. Throws `storageFailure` (unlogged: the caller checks many) when the store cannot say.
    public func refusal(ofToken token: String) async throws(DomainError) -> SessionEnd? {
        guard let digest = Self.tokenDigest(token) else { return .tokenRevoked }
        do {
            guard let user = try await store.user(tokenHash: digest, issuedAfter: nil) else { return .tokenRevoked }
            let now = clock.now()
            if let suspension = try await store.suspension(userID: user.id, now: now), suspension.holds(at: now) {
                return .suspended
            }
            return nil
        } catch {
            throw DomainError.storageFailure
        }
    }

    /// Throws the account's suspension refusal while one holds.
    private func refuseIfSuspended(_ user: User, _ what: String) async throws(DomainError) {
        let now = clock.now()
        let suspension: Suspension?
        do { suspension = try await store.suspension(userID: user.id, now: now) } catch {
            throw storageFailure(error, what)
        }
        if let suspension, suspension.holds(at: now) { throw suspension.refusal }
    }

    /// Revokes a token. Revoking an unknown token is not an error (logout is idempotent).
    public func logout(token: String) async throws(DomainError) {
        guard let digest = Self.tokenDigest(token) else { return }
        do { _ = try await store.deleteToken(hash: digest) } catch { throw storageFailure(error, "logout") }
    }

    /// Revokes every token of an account (`logout {all: true}`); returns how many there were.
    @discardableResult
    public func logoutEverywhere(userID: Int64) async throws(DomainError) -> Int {
        do { return try await store.deleteTokens(userID: userID) } catch { throw storageFailure(error, "logout") }
    }

    private static let invalidToken = DomainError(.unauthorized, "Invalid, expired or revoked token")

    /// The stored digest of a token, or nil when the text cannot be a token Cairn issued.
    public static func tokenDigest(_ token: String) -> [UInt8]? {
        guard token.utf8.count == 43, let raw = Base64URL.decode(token), raw.count == 32 else { return nil }
        return Digest.sha256(raw)
    }

    private func openSession(for user: User) async throws(DomainError) -> Session {
        let raw = random.bytes(32)
        do {
            try await store.insertToken(hash: Digest.sha256(raw), userID: user.id, createdAt: clock.now())
        } catch {
            throw storageFailure(error, "token")
        }
        return Session(user: user, token: Base64URL.encode(raw))
    }

    private static func throttled(_ wait: Int64) -> DomainError {
        DomainError(.rateLimited, "Too many failed logins; try again in \((wait + 999) / 1000) s")
    }

    private func storageFailure(_ error: any Error, _ what: String) -> DomainError {
        logger.error("storage failure during \(what): \(error)")
        return DomainError.storage(error)
    }
}

extension String {
    /// The text padded with leading zeros to `width` characters.
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }

    /// The text without leading and trailing whitespace.
    public func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
