// The one error type of the client: what the hub answers (its wire code and message, with numeric details such as
// `retry_after_ms`) and what the client decides on its own (a timeout, a lost connection, a closed client).
import Foundation

/// An error from the hub, or from the client itself.
///
/// `code` is the hub's wire code (`invalid_credentials`, `not_found`, `rate_limited`, … see docs/PROTOCOL.md, "Error
/// codes"), or one of the client's own: ``timeout`` (no reply in time), ``disconnected`` (the connection went before
/// the reply, or is not open), ``closed`` (``CairnClient/close()`` was called), ``tooLarge`` (a request over the hub's
/// message limit, refused before sending) and ``invalidReply`` (a reply the client could not read).
public struct CairnError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The wire code, e.g. `invalid_credentials`, or one of the client's own codes.
    public var code: String
    /// A human-readable message (the hub's own, when it answered).
    public var message: String
    /// The op that failed, when known.
    public var op: String?
    /// How long to wait before trying again, when the hub says (`retry_after_ms`) or an HTTP `Retry-After` does.
    public var retryAfter: Duration?
    /// The close code that ended the connection, for ``disconnected``.
    public var closeCode: UInt16?
    /// The HTTP status of a failed upload or download.
    public var status: Int?
    /// The whole error object the hub sent (`distance`, `radius`, `until`, …), or an empty object.
    public var details: JSONValue

    /// Makes an error.
    public init(
        code: String, message: String, op: String? = nil, retryAfter: Duration? = nil, closeCode: UInt16? = nil,
        status: Int? = nil, details: JSONValue = .object([:])
    ) {
        self.code = code
        self.message = message
        self.op = op
        self.retryAfter = retryAfter
        self.closeCode = closeCode
        self.status = status
        self.details = details
    }

    /// The error object of a reply or an `error` event: `{code, message, retry_after_ms?, …}`.
    init(wire error: JSONValue?, op: String?) {
        let error = error ?? .object([:])
        let retry = error["retry_after_ms"]?.doubleValue.map { Duration.milliseconds($0) }
        self.init(
            code: error["code"]?.stringValue ?? "internal", message: error["message"]?.stringValue ?? "error",
            op: op, retryAfter: retry, details: error)
    }

    /// The client's code for a request that got no reply within its timeout.
    public static let timeout = "timeout"
    /// The client's code for a request whose connection was lost, or that was made while not connected.
    public static let disconnected = "disconnected"
    /// The client's code for a request made after, or pending at, ``CairnClient/close()``.
    public static let closed = "closed"
    /// The client's code (and the hub's) for a request over the hub's message limit.
    public static let tooLarge = "too_large"
    /// The client's code for a reply it could not decode into the expected type.
    public static let invalidReply = "invalid_reply"

    /// Whether the client decided this error itself because of the connection (``timeout``, ``disconnected``,
    /// ``closed``), as opposed to an answer of the hub.
    public var isLocal: Bool {
        code == Self.timeout || code == Self.disconnected || code == Self.closed
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}
