// The one error type the codec and the handlers above it throw: a contract code plus a human-readable message.
// It is a plain value (no underlying error, no stack) so it can cross threads, be compared in tests and be
// written straight into a reply by `Envelope.failure`. Its codes are the one list in CairnErrorCodes.
public import CairnErrorCodes

/// An error that is reported to the client: a protocol error code and a human-readable message.
public struct WireError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The machine-readable code sent as `error.code`.
    public let code: ErrorCode
    /// The human-readable text sent as `error.message`.
    public let message: String
    /// Numeric facts a client can act on, sent as extra fields of the error object (for example `too_far` carries
    /// `distance` and `radius` in metres, `rate_limited` may carry `retry_after_ms`).
    public var details: [Detail] = []

    /// One extra numeric field of an error.
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

    /// Creates an error with the given code and message.
    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The same error with extra numeric fields.
    public func with(_ details: Detail...) -> WireError {
        var copy = self
        copy.details += details
        return copy
    }

    /// A `bad_request` error: the request was malformed or a field was missing or ill-typed.
    public static func badRequest(_ message: String) -> WireError {
        WireError(.badRequest, message)
    }

    /// `code: message`, for logs.
    public var description: String { "\(code.rawValue): \(message)" }
}
