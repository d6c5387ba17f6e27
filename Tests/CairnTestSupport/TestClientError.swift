// Why this exists: integration tests need to tell failures apart — a handshake refused with 404 is an expected
// outcome in one test and a bug in another, a timeout means "the server said nothing", and a close frame arriving
// where a reply was expected carries a code (e.g. 4508) that the test wants to assert on. One error type, shared by
// WebSocketClient and HTTPClient, with accessors so tests need not pattern-match every case.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Everything `WebSocketClient` and `HTTPClient` can throw.
public enum TestClientError: Error, Equatable, CustomStringConvertible {
    /// The host is not an IPv4 address in 127.0.0.0/8 (or "localhost"); the clients never leave the machine.
    case notLoopback(host: String)
    /// TCP connect failed; `errno` is e.g. `ECONNREFUSED` when nothing listens on the port.
    case connectFailed(host: String, port: Int, errno: Int32)
    /// Nothing (or not enough) arrived before the deadline; the text says what was being waited for.
    case timeout(String)
    /// The peer reset the connection or it broke while writing (EPIPE, ECONNRESET).
    case connectionLost(String)
    /// The WebSocket upgrade was answered with something other than `101`.
    case handshakeRejected(status: Int, headers: [String: String], body: String)
    /// The server answered `101` but the answer is wrong (bad Sec-WebSocket-Accept, subprotocol, upgrade headers).
    case handshakeInvalid(String)
    /// The server sent a frame RFC 6455 forbids (masked, reserved bits or opcodes, bad fragmentation, bad UTF-8).
    case protocolViolation(String)
    /// A close frame (or, with `code == nil`, a dropped TCP connection) arrived where a JSON object was expected.
    case closed(code: UInt16?, reason: String)
    /// The client cannot send: its socket is closed or it has already sent a close frame.
    case notOpen(String)
    /// A message of the wrong kind arrived (e.g. a binary frame where JSON text was expected).
    case unexpectedMessage(String)
    /// A text line was not a JSON object.
    case malformedJSON(String)
    /// The HTTP response could not be parsed.
    case malformedHTTP(String)
    /// The caller passed something the client cannot send (e.g. a non-JSON value, a close reason over 123 bytes).
    case invalidArgument(String)
    /// Any other socket error.
    case ioFailed(String)
    /// The TLS handshake or a TLS read/write failed (e.g. the server's certificate did not verify).
    case tlsFailed(String)

    /// True for `.timeout`.
    public var isTimeout: Bool {
        if case .timeout = self { return true }
        return false
    }

    /// The HTTP status of a refused WebSocket upgrade.
    public var httpStatus: Int? {
        if case .handshakeRejected(let status, _, _) = self { return status }
        return nil
    }

    /// The close code when the error is `.closed` (nil also when TCP dropped without a close frame).
    public var closeCode: UInt16? {
        if case .closed(let code, _) = self { return code }
        return nil
    }

    /// The close reason when the error is `.closed`.
    public var closeReason: String? {
        if case .closed(_, let reason) = self { return reason }
        return nil
    }

    public var description: String {
        switch self {
        case .notLoopback(let host):
            return "refusing to connect to \(host): test clients only talk to 127.0.0.0/8"
        case .connectFailed(let host, let port, let code):
            return "connect to \(host):\(port) failed: \(String(cString: strerror(code))) (errno \(code))"
        case .timeout(let what):
            return "timed out: \(what)"
        case .connectionLost(let what):
            return "connection lost: \(what)"
        case .handshakeRejected(let status, _, let body):
            return "WebSocket upgrade refused with HTTP \(status)" + (body.isEmpty ? "" : ": \(body.prefix(500))")
        case .handshakeInvalid(let what):
            return "invalid WebSocket upgrade response: \(what)"
        case .protocolViolation(let what):
            return "server violated RFC 6455: \(what)"
        case .closed(let code, let reason):
            if let code { return "connection closed by server with \(code)" + (reason.isEmpty ? "" : " \"\(reason)\"") }
            return "connection dropped by server without a close frame"
        case .notOpen(let what):
            return "connection not open: \(what)"
        case .unexpectedMessage(let what):
            return "unexpected message: \(what)"
        case .malformedJSON(let what):
            return "malformed JSON: \(what)"
        case .malformedHTTP(let what):
            return "malformed HTTP response: \(what)"
        case .invalidArgument(let what):
            return "invalid argument: \(what)"
        case .ioFailed(let what):
            return "I/O error: \(what)"
        case .tlsFailed(let what):
            return "TLS failed: \(what)"
        }
    }
}
