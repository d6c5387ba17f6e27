// Why this exists: integration tests must talk to the real hub the way a phone does — over a real TCP socket,
// through a real RFC 6455 handshake and framing — without trusting any of the server's own code. This is a small,
// blocking, strict client: every call is bounded by a timeout, server frames are checked against the RFC, pings are
// answered behind the test's back, and the close handshake is surfaced as a value (`.close(code:reason:)`) so tests
// can assert on close codes. The JSON layer on top lives in WebSocketClient+JSON.swift.
//
// Concurrency: a client belongs to one test thread at a time; it holds no locks and is deliberately not Sendable.

import Foundation

/// A blocking RFC 6455 WebSocket client for 127.0.0.0/8.
public final class WebSocketClient {
    /// A complete message (or the end of the connection) from the server.
    public enum Incoming: Equatable, Sendable {
        /// A text message (reassembled if it was fragmented).
        case text(String)
        /// A binary message (reassembled if it was fragmented).
        case binary([UInt8])
        /// The server's close frame, already answered. `code` is nil if the frame had no status code, and also when
        /// the server dropped the TCP connection without any close frame (then `reason` is empty).
        case close(code: UInt16?, reason: String)
    }

    /// The upgrade response's headers, names lowercased.
    public let responseHeaders: [String: String]
    /// The subprotocol the server selected, if one was requested.
    public let negotiatedSubprotocol: String?
    /// The server's port.
    public let port: Int
    /// The ALPN protocol the server chose when connected with TLS; nil without TLS.
    public let tlsProtocol: String?
    /// Timeout in seconds for calls whose `timeout` argument is nil, and for each send.
    public var defaultTimeout: Double
    /// Largest message the client accepts before throwing `.protocolViolation`.
    public var maxMessageSize = 64 * 1024 * 1024

    private var socket: LoopbackSocket?
    private var readBuffer: [UInt8] = []
    private var readOffset = 0
    private var fragmentOpcode: WebSocketFrame.Opcode?
    private var fragmentPayload: [UInt8] = []
    private var closeSent = false
    private var receivedClose: (code: UInt16?, reason: String)?
    /// Why the connection was torn down locally, for later `.notOpen` errors.
    private var failure: String?

    /// JSON objects received but not yet handed out (see WebSocketClient+JSON.swift).
    var pendingObjects: [[String: Any]] = []
    /// The id the next `request` uses.
    var nextRequestID = 1

    /// Connects to `ws://host:port/path` and completes the opening handshake within `timeout` seconds.
    ///
    /// - Parameters:
    ///   - host: an IPv4 address in 127.0.0.0/8 (or "localhost"); anything else throws `.notLoopback`.
    ///   - subprotocol: offered in `Sec-WebSocket-Protocol` and required back; nil offers none (and then the server
    ///     must not choose one).
    ///   - headers: extra request headers (e.g. `Authorization: Bearer ...`); they replace a default header of the
    ///     same name.
    /// - Throws: `TestClientError.handshakeRejected` (with the HTTP status) when the server does not answer 101,
    ///   `.handshakeInvalid` when its 101 is wrong, `.connectFailed`, `.timeout`.
    /// - `receiveBufferSize`: a small SO_RCVBUF (set before connecting) makes this client a slow reader.
    /// - `sendBufferSize`: a fixed SO_SNDBUF: sends to a server that stops reading stall after a known amount.
    /// - `tls`: connect with `wss://` (a verified TLS handshake first); the negotiated ALPN protocol is in
    ///   `tlsProtocol`.
    public init(
        host: String = "127.0.0.1", port: Int, path: String = "/ws", subprotocol: String? = "cairn.v1",
        headers: [String: String] = [:], timeout: Double = 5, receiveBufferSize: Int? = nil,
        sendBufferSize: Int? = nil, tls: TLSOptions? = nil
    ) throws {
        let deadline = Deadline(seconds: timeout)
        let socket = try LoopbackSocket(
            host: host, port: port, deadline: deadline, receiveBufferSize: receiveBufferSize,
            sendBufferSize: sendBufferSize, tls: tls)
        tlsProtocol = socket.tls?.negotiatedProtocol
        let key = headers.first { $0.key.lowercased() == "sec-websocket-key" }?.value ?? WebSocketHandshake.makeKey()
        try socket.write(
            WebSocketHandshake.request(
                host: host, port: port, path: path, key: key, subprotocol: subprotocol, headers: headers),
            deadline: deadline)

        var buffer: [UInt8] = []
        var head: HTTPResponseHead?
        while head == nil {
            head = try HTTPResponseHead.parse(buffer)
            if head != nil { break }
            let chunk: [UInt8]?
            do {
                chunk = try socket.read(deadline: deadline)
            } catch let error as TestClientError where error.isTimeout {
                throw TestClientError.timeout(
                    "waiting \(timeout)s for the answer to GET \(path) upgrade (\(buffer.count) bytes so far)")
            }
            guard let chunk else {
                throw TestClientError.connectionLost(
                    "server closed the connection without answering the upgrade of \(path)"
                        + (buffer.isEmpty
                            ? "" : " (partial answer: \(String(decoding: buffer, as: UTF8.self).prefix(200)))"))
            }
            buffer += chunk
        }
        let response = head!
        buffer.removeFirst(response.length)

        guard response.status == 101 else {
            let body = Self.readRejectionBody(buffer, head: response, socket: socket, deadline: deadline)
            socket.close()
            throw TestClientError.handshakeRejected(
                status: response.status, headers: response.headers, body: String(decoding: body, as: UTF8.self))
        }
        negotiatedSubprotocol = try WebSocketHandshake.validate(response, key: key, requestedSubprotocol: subprotocol)
        responseHeaders = response.headers
        self.port = port
        self.socket = socket
        defaultTimeout = timeout
        // Frames the server sent right behind its 101 (in the same segment) are the start of the frame stream.
        readBuffer = buffer
    }

    deinit { close() }

    /// True until a close frame is sent or received, the server drops the connection, or `close()` is called.
    public var isOpen: Bool { socket != nil && !closeSent && receivedClose == nil }

    // MARK: - Sending

    /// Sends one text frame.
    public func sendText(_ text: String) throws {
        try sendDataFrame(WebSocketFrame(opcode: .text, payload: Array(text.utf8)))
    }

    /// Sends `text` as one message split into frames of at most `fragmentSize` bytes: a text frame, then
    /// continuation frames, FIN on the last. Splits may fall inside a UTF-8 sequence (that is legal).
    public func sendFragmented(_ text: String, fragmentSize: Int) throws {
        guard fragmentSize > 0 else { throw TestClientError.invalidArgument("fragmentSize must be positive") }
        let bytes = Array(text.utf8)
        var start = 0
        repeat {
            let end = min(start + fragmentSize, bytes.count)
            try sendDataFrame(
                WebSocketFrame(
                    opcode: start == 0 ? .text : .continuation, payload: Array(bytes[start..<end]),
                    fin: end == bytes.count))
            start = end
        } while start < bytes.count
    }

    /// Sends one binary frame.
    public func sendBinary(_ data: [UInt8]) throws {
        try sendDataFrame(WebSocketFrame(opcode: .binary, payload: data))
    }

    /// Writes `bytes` to the socket as they are, with no framing and no state checks — for malformed-frame tests
    /// (see `WebSocketFrame.encoded(masked:mask:)`). A close frame sent this way is not recorded as sent.
    public func sendRaw(_ bytes: [UInt8]) throws {
        guard let socket else { throw TestClientError.notOpen(failure ?? "client closed") }
        try socket.write(bytes, deadline: Deadline(seconds: defaultTimeout))
    }

    /// Sends a close frame with `code` and `reason` (at most 123 UTF-8 bytes). Afterwards only `receive` and the
    /// reading helpers work; the server's answering close arrives as `.close`.
    public func sendClose(code: UInt16 = 1000, reason: String = "") throws {
        let reasonBytes = Array(reason.utf8)
        guard reasonBytes.count <= 123 else {
            throw TestClientError.invalidArgument("close reason is \(reasonBytes.count) bytes; the limit is 123")
        }
        guard !closeSent else { throw TestClientError.notOpen("a close frame was already sent") }
        try writeFrame(WebSocketFrame(opcode: .close, payload: [UInt8(code >> 8), UInt8(code & 0xFF)] + reasonBytes))
        closeSent = true
    }

    /// Sends a ping (the server's pong is consumed silently by `receive`).
    public func sendPing(_ payload: [UInt8] = []) throws {
        guard !closeSent else { throw TestClientError.notOpen("a close frame was already sent") }
        try writeFrame(WebSocketFrame(opcode: .ping, payload: payload))
    }

    private func sendDataFrame(_ frame: WebSocketFrame) throws {
        guard !closeSent else { throw TestClientError.notOpen("a close frame was already sent") }
        if let receivedClose {
            throw TestClientError.notOpen(
                "the server closed the connection (\(receivedClose.code.map(String.init) ?? "no code"))")
        }
        try writeFrame(frame)
    }

    private func writeFrame(_ frame: WebSocketFrame) throws {
        guard let socket else { throw TestClientError.notOpen(failure ?? "client closed") }
        try socket.write(frame.encoded(), deadline: Deadline(seconds: defaultTimeout))
    }

    // MARK: - Receiving

    /// The next complete message. Pings are answered and pongs skipped; fragmented messages are reassembled.
    /// A close frame is answered (once) and returned as `.close`; so is a dropped TCP connection, as
    /// `.close(code: nil, reason: "")`. After that, every call returns the same `.close` again.
    ///
    /// - Parameter timeout: seconds to wait (default `defaultTimeout`); throws `TestClientError.timeout` when
    ///   nothing complete arrives in time. A partly received message is kept and completed by the next call.
    public func receive(timeout: Double? = nil) throws -> Incoming {
        let seconds = timeout ?? defaultTimeout
        return try receive(deadline: Deadline(seconds: seconds), waitingFor: "a message (\(seconds)s)")
    }

    /// `receive` against a deadline shared by several reads; `waitingFor` words the timeout error.
    func receive(deadline: Deadline, waitingFor: String) throws -> Incoming {
        if let receivedClose { return .close(code: receivedClose.code, reason: receivedClose.reason) }
        guard socket != nil else { throw TestClientError.notOpen(failure ?? "client closed") }
        do {
            return try receiveMessage(deadline: deadline, waitingFor: waitingFor)
        } catch let error as TestClientError {
            if case .protocolViolation(let what) = error { failConnection(what) }
            throw error
        }
    }

    /// RFC 6455 section 7.1.7, "Fail the WebSocket Connection": send close 1002 (best-effort) and drop TCP. The
    /// buffered input is unusable after a violation, so there is no point in waiting for the server's answer.
    private func failConnection(_ why: String) {
        if !closeSent, socket != nil {
            try? writeFrame(WebSocketFrame(opcode: .close, payload: [0x03, 0xEA]))  // 1002
            closeSent = true
        }
        failure = "failed after a protocol violation: \(why)"
        socket?.drainAvailable()
        socket?.close()
        socket = nil
    }

    private func receiveMessage(deadline: Deadline, waitingFor: String) throws -> Incoming {
        while true {
            guard let frame = try nextFrame(deadline: deadline, waitingFor: waitingFor) else {
                receivedClose = (nil, "")
                fragmentOpcode = nil
                fragmentPayload = []
                return .close(code: nil, reason: "")
            }
            switch frame.opcode! {
            case .ping:
                if !closeSent { try? writeFrame(WebSocketFrame(opcode: .pong, payload: frame.payload)) }
            case .pong:
                continue
            case .close:
                return try handleClose(frame.payload)
            case .text, .binary:
                guard fragmentOpcode == nil else {
                    throw TestClientError.protocolViolation("new \(frame.opcode!) frame inside a fragmented message")
                }
                if frame.fin { return try message(frame.opcode!, frame.payload) }
                fragmentOpcode = frame.opcode
                fragmentPayload = frame.payload
            case .continuation:
                guard let opcode = fragmentOpcode else {
                    throw TestClientError.protocolViolation("continuation frame without a message to continue")
                }
                fragmentPayload += frame.payload
                guard fragmentPayload.count <= maxMessageSize else {
                    throw TestClientError.protocolViolation(
                        "message exceeds the client limit of \(maxMessageSize) bytes")
                }
                if frame.fin {
                    let payload = fragmentPayload
                    fragmentOpcode = nil
                    fragmentPayload = []
                    return try message(opcode, payload)
                }
            }
        }
    }

    private func message(_ opcode: WebSocketFrame.Opcode, _ payload: [UInt8]) throws -> Incoming {
        guard opcode == .text else { return .binary(payload) }
        let text = String(decoding: payload, as: UTF8.self)
        // Decoding replaces invalid sequences with U+FFFD, so a lossless round trip means the bytes were valid UTF-8.
        guard text.utf8.elementsEqual(payload) else {
            throw TestClientError.protocolViolation("text message is not valid UTF-8")
        }
        return .text(text)
    }

    private func handleClose(_ payload: [UInt8]) throws -> Incoming {
        var code: UInt16?
        var reason = ""
        if payload.count == 1 { throw TestClientError.protocolViolation("close frame with a 1-byte payload") }
        if payload.count >= 2 {
            code = UInt16(payload[0]) << 8 | UInt16(payload[1])
            reason = String(decoding: payload[2...], as: UTF8.self)
        }
        receivedClose = (code, reason)
        if !closeSent {
            // Echo the status code when it is one an endpoint may send; otherwise answer with an empty close.
            let echo: [UInt8]
            if let code, Self.isSendableCloseCode(code) {
                echo = [UInt8(code >> 8), UInt8(code & 0xFF)]
            } else {
                echo = []
            }
            try? writeFrame(WebSocketFrame(opcode: .close, payload: echo))
            closeSent = true
        }
        return .close(code: code, reason: reason)
    }

    private static func isSendableCloseCode(_ code: UInt16) -> Bool {
        (1000...1003).contains(code) || (1007...1014).contains(code) || (3000...4999).contains(code)
    }

    /// The next frame, reading from the socket as needed. Nil when the server has dropped the connection.
    private func nextFrame(deadline: Deadline, waitingFor: String) throws -> WebSocketFrame? {
        while true {
            if let (frame, consumed) = try WebSocketFrame.decodeServerFrame(
                readBuffer, from: readOffset, maxPayload: maxMessageSize)
            {
                readOffset += consumed
                if readOffset == readBuffer.count {
                    readBuffer.removeAll(keepingCapacity: true)
                    readOffset = 0
                } else if readOffset > 65536 {
                    readBuffer.removeFirst(readOffset)
                    readOffset = 0
                }
                return frame
            }
            guard let socket else { throw TestClientError.notOpen(failure ?? "client closed") }
            let chunk: [UInt8]?
            do {
                chunk = try socket.read(deadline: deadline)
            } catch let error as TestClientError where error.isTimeout {
                throw TestClientError.timeout("waiting for \(waitingFor) on port \(port)")
            }
            guard let chunk else { return nil }
            readBuffer += chunk
        }
    }

    // MARK: - Closing

    /// Ends the connection: sends close 1000 if no close was exchanged yet, waits briefly (at most 2 s) for the
    /// server's answering close, then closes the socket. Idempotent; also called by deinit.
    public func close() {
        guard let socket else { return }
        if receivedClose == nil {
            if !closeSent { try? sendClose(code: 1000) }
            let deadline = Deadline(seconds: min(defaultTimeout, 2))
            while receivedClose == nil {
                guard (try? receive(deadline: deadline, waitingFor: "the server's close")) != nil else { break }
            }
        }
        socket.drainAvailable()
        socket.close()
        self.socket = nil
    }

    /// Closes the TCP connection at once, without a close frame — a phone losing its network.
    public func disconnectAbruptly() {
        failure = "disconnected abruptly by the test"
        socket?.close()
        socket = nil
    }

    /// Reads the rest of a refused upgrade's body, briefly and best-effort: it is only for the error message.
    private static func readRejectionBody(
        _ initial: [UInt8], head: HTTPResponseHead, socket: LoopbackSocket,
        deadline: Deadline
    ) -> [UInt8] {
        var body = initial
        let length = head.headers["content-length"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        let bodyDeadline = Deadline(seconds: min(deadline.remainingSeconds, 1))
        while body.count < (length ?? Int.max), body.count < 65536 {
            guard let chunk = try? socket.read(deadline: bodyDeadline) else { break }  // nil: EOF or error
            body += chunk
        }
        return length.map { Array(body.prefix($0)) } ?? body
    }
}
