// The one error type the codec and the handlers above it throw: a contract code plus a human-readable message.
// It is a plain value (no underlying error, no stack) so it can cross threads, be compared in tests and be
// written straight into a reply by `Envelope.failure`.

/// An error that is reported to the client: a protocol error code and a human-readable message.
public struct WireError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The machine-readable code sent as `error.code`.
    public let code: ErrorCode
    /// The human-readable text sent as `error.message`.
    public let message: String

    /// Creates an error with the given code and message.
    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    /// A `bad_request` error: the request was malformed or a field was missing or ill-typed.
    public static func badRequest(_ message: String) -> WireError {
        WireError(.badRequest, message)
    }

    /// `code: message`, for logs.
    public var description: String { "\(code.rawValue): \(message)" }
}
