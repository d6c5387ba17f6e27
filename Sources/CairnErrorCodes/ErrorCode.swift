// The error codes of the contract (docs/PROTOCOL.md, "Error codes"), as one closed enum and the one list of them:
// the domain refuses with them (`DomainError.Code`) and the wire writes them (`WireError`), and neither knows the
// other, so the list sits below both, knowing neither. The raw value is the exact string clients see, so a code can
// never be misspelt at a call site, and `CaseIterable` lets tests check the set against the contract in one place.
// The wire raises a few on its own (bad_request, rate_limited, too_large, internal); every one may come from the
// domain.

/// A machine-readable error code of the Cairn protocol; the raw value is what goes on the wire.
public enum ErrorCode: String, Sendable, CaseIterable {
    /// The request is malformed: bad JSON, a missing field, or a field of the wrong type.
    case badRequest = "bad_request"
    /// The op needs an authenticated connection.
    case unauthorized
    /// Login failed: unknown user or wrong password.
    case invalidCredentials = "invalid_credentials"
    /// `register` asked for a username that already exists.
    case usernameTaken = "username_taken"
    /// The caller may not do this.
    case forbidden
    /// The caller does not own the object it tried to change.
    case notOwner = "not_owner"
    /// The op needs the two users to be friends.
    case notFriends = "not_friends"
    /// The referenced user, relic or message does not exist.
    case notFound = "not_found"
    /// The caller is too far away (for example from a relic).
    case tooFar = "too_far"
    /// A password-protected object was opened with the wrong password.
    case wrongPassword = "wrong_password"
    /// The object or token has expired.
    case expired
    /// The caller sent too much, too fast.
    case rateLimited = "rate_limited"
    /// A payload is larger than allowed.
    case tooLarge = "too_large"
    /// The account is suspended.
    case suspended
    /// `tracker.pair` named a device id another tracker already has.
    case deviceTaken = "device_taken"
    /// The hub failed; nothing was applied, and the request may be retried.
    case `internal`
    /// The hub's database is away or did not answer in time; nothing was applied, and the request may be retried
    /// shortly.
    case unavailable
}
