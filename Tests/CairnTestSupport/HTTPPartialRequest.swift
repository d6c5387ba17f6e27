// Why this exists: upload limits and clean-up are about requests that are still arriving, or never finish — a
// client that declares a body and sends part of it, holds the connection, or hangs up. `HTTPClient` sends whole
// requests; this sends the head and any part of the body now, and the rest (or nothing) later.

import Foundation

/// An HTTP/1.1 request sent in pieces over one loopback connection.
public final class HTTPPartialRequest {
    private let socket: LoopbackSocket
    private let method: String
    private let timeout: Double

    /// Connects and sends `method path` with `headers` (plus `Host` and `Connection: close`) and the first `body`
    /// bytes. Nothing else is added: declare `Content-Length` in `headers` if the request has a body.
    public init(
        method: String = "POST", host: String = "127.0.0.1", port: Int, path: String,
        headers: [String: String], body: [UInt8] = [], timeout: Double = 10
    ) throws {
        self.method = method
        self.timeout = timeout
        let deadline = Deadline(seconds: timeout)
        socket = try LoopbackSocket(host: host, port: port, deadline: deadline)
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        try socket.write(Array(head.utf8) + body, deadline: deadline)
    }

    /// Sends more body bytes.
    public func send(_ bytes: [UInt8]) throws {
        try socket.write(bytes, deadline: Deadline(seconds: timeout))
    }

    /// Reads the response (after sending `rest`, if given).
    public func response(after rest: [UInt8] = []) throws -> HTTPResponse {
        let deadline = Deadline(seconds: timeout)
        if !rest.isEmpty { try socket.write(rest, deadline: deadline) }
        return try HTTPClient.readResponse(from: socket, method: method, deadline: deadline)
    }

    /// Waits for the server's `100 Continue` (the request must have sent `Expect: 100-continue` and no body yet)
    /// and returns its status line's code, or the code of whatever final answer came instead. Bytes after the
    /// interim head are not expected before the body is sent.
    public func interimStatus() throws -> Int {
        let deadline = Deadline(seconds: timeout)
        var buffer: [UInt8] = []
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        while buffer.count < 4 || !buffer.indices.dropLast(3).contains(where: { Array(buffer[$0..<$0 + 4]) == end }) {
            guard let chunk = try socket.read(deadline: deadline) else {
                throw TestClientError.malformedHTTP("connection closed before an interim response")
            }
            buffer += chunk
        }
        let line = String(decoding: buffer.prefix { $0 != 0x0D }, as: UTF8.self)
        let parts = line.split(separator: " ")
        guard parts.count >= 2, let code = Int(parts[1]) else {
            throw TestClientError.malformedHTTP("bad status line \"\(line.prefix(60))\"")
        }
        return code
    }

    /// Hangs up without finishing.
    public func abandon() { socket.close() }
}
