// The one error type of the domain: a refusal the caller can act on, with a code, a sentence for a human, and
// numeric facts (a distance, a wait). The domain never writes JSON; its codes are the contract's (CairnErrorCodes,
// below both the domain and the wire), so the protocol layer passes a refusal on to the wire as it is.
public import CairnErrorCodes

/// A refusal from the domain: what went wrong, in words and as a code.
public struct DomainError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Why a request was refused: one of the contract's error codes, the one list the wire writes too.
    public typealias Code = ErrorCode

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
