// The one error type of the domain: a refusal the caller can act on, with a code, a sentence for a human, and
// numeric facts (a distance, a wait). The domain never writes JSON; the protocol layer maps each code to the
// contract's `error.code` string one to one (the raw values are those strings), so a refusal reads the same on
// the wire as it did when the domain wrote its own replies.

/// A refusal from the domain: what went wrong, in words and as a code.
public struct DomainError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Why a request was refused. The raw value is the contract's error code.
    public enum Code: String, Sendable, CaseIterable {
        /// The request was malformed, or a value out of range.
        case badRequest = "bad_request"
        /// The connection must authenticate first, or its session ended.
        case unauthorized
        /// Wrong username or password.
        case invalidCredentials = "invalid_credentials"
        /// The username is taken.
        case usernameTaken = "username_taken"
        /// Not allowed for this account.
        case forbidden
        /// Only the owner may do this.
        case notOwner = "not_owner"
        /// The two users are not friends.
        case notFriends = "not_friends"
        /// No such thing.
        case notFound = "not_found"
        /// Too far from the place.
        case tooFar = "too_far"
        /// The password did not match.
        case wrongPassword = "wrong_password"
        /// Its time is up.
        case expired
        /// Too many attempts or too much at once.
        case rateLimited = "rate_limited"
        /// Too large.
        case tooLarge = "too_large"
        /// The account is suspended.
        case suspended
        /// The device id is paired with another tracker.
        case deviceTaken = "device_taken"
        /// The server failed; nothing was applied.
        case `internal`
        /// The database is away or did not answer in time; nothing was applied (try again shortly).
        case unavailable
    }

    /// One numeric fact a client can act on (e.g. `distance`, `retry_after_ms`).
    public struct Detail: Equatable, Sendable {
        /// The field name.
        public let name: String
        /// Its value.
        public let value: Int64

        /// Creates the value.
        public init(_ name: String, _ value: Int64) {
            self.name = name
            self.value = value
        }
    }

    /// What went wrong.
    public let code: Code
    /// A sentence for a human.
    public let message: String
    /// Numeric facts, in order.
    public var details: [Detail] = []

    /// Creates a refusal.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The same refusal with numeric facts added.
    public func with(_ details: Detail...) -> DomainError {
        var copy = self
        copy.details += details
        return copy
    }

    /// A `bad_request` refusal.
    public static func badRequest(_ message: String) -> DomainError { DomainError(.badRequest, message) }

    /// The refusal for a request that needs an account.
    public static let unauthenticated = DomainError(.unauthorized, "authenticate first: register, login, guest or auth")

    /// The refusal for a store that failed; the detail is logged, never sent.
    public static let storageFailure = DomainError(.internal, "Storage failure; the request was not applied")

    public var description: String { "\(code.rawValue): \(message)" }
}
