// Why this exists: tests of the HTTP side of the hub (/healthz, /metrics, media upload, signed media URLs) need
// a plain HTTP/1.1 client that depends on nothing but sockets, never leaves loopback, and reports exactly what the
// server sent — including chunked bodies, which libwebsockets may use. One request per connection
// (`Connection: close`); no redirects, no keep-alive; TLS (https) when given `TLSOptions`.

import Foundation

/// A minimal blocking HTTP/1.1 client for 127.0.0.0/8.
public enum HTTPClient {
    /// `GET path`. Throws `TestClientError` on connection problems, timeouts or an unparsable answer; any status
    /// code (404, 500, ...) is a normal `HTTPResponse`.
    public static func get(
        host: String = "127.0.0.1", port: Int, path: String, headers: [String: String] = [:], timeout: Double = 5,
        tls: TLSOptions? = nil
    ) throws -> HTTPResponse {
        try request(
            method: "GET", host: host, port: port, path: path, headers: headers, body: nil, timeout: timeout,
            tls: tls)
    }

    /// `POST path` with `body` and a `Content-Type` header.
    public static func post(
        host: String = "127.0.0.1", port: Int, path: String, body: [UInt8],
        contentType: String = "application/octet-stream", headers: [String: String] = [:], timeout: Double = 5
    ) throws -> HTTPResponse {
        var allHeaders = headers
        if !allHeaders.keys.contains(where: { $0.lowercased() == "content-type" }) {
            allHeaders["Content-Type"] = contentType
        }
        return try request(
            method: "POST", host: host, port: port, path: path, headers: allHeaders, body: body, timeout: timeout)
    }

    /// Any method. `Host`, `Connection: close` and (with a body) `Content-Length` are added unless `headers`
    /// already names them. `timeout` bounds the whole exchange.
    public static func request(
        method: String, host: String = "127.0.0.1", port: Int, path: String, headers: [String: String] = [:],
        body: [UInt8]? = nil, timeout: Double = 5, tls: TLSOptions? = nil
    ) throws -> HTTPResponse {
        let deadline = Deadline(seconds: timeout)
        let socket = try LoopbackSocket(host: host, port: port, deadline: deadline, tls: tls)
        defer { socket.close() }

        let given = Set(headers.keys.map { $0.lowercased() })
        var head = "\(method) \(path) HTTP/1.1\r\n"
        if !given.contains("host") { head += "Host: \(host):\(port)\r\n" }
        if !given.contains("connection") { head += "Connection: close\r\n" }
        if let body, !given.contains("content-length") { head += "Content-Length: \(body.count)\r\n" }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        try socket.write(Array(head.utf8) + (body ?? []), deadline: deadline)

        return try readResponse(from: socket, method: method, deadline: deadline)
    }

    /// Reads one response (skipping interim 1xx answers) until its body is complete or the server closes.
    static func readResponse(from socket: LoopbackSocket, method: String, deadline: Deadline) throws
        -> HTTPResponse
    {
        var buffer: [UInt8] = []
        var eof = false
        func readMore(_ what: String) throws {
            do {
                if let chunk = try socket.read(deadline: deadline) { buffer += chunk } else { eof = true }
            } catch let error as TestClientError where error.isTimeout {
                throw TestClientError.timeout(
                    "\(what) from \(socket.host):\(socket.port) (\(buffer.count) bytes so far)")
            }
        }

        var head: HTTPResponseHead
        while true {
            if let parsed = try HTTPResponseHead.parse(buffer) {
                if (100...199).contains(parsed.status) && parsed.status != 101 {
                    buffer.removeFirst(parsed.length)
                    continue
                }
                head = parsed
                break
            }
            if eof {
                throw TestClientError.malformedHTTP(
                    "connection closed before the response head was complete (\(buffer.count) bytes received)")
            }
            try readMore("waiting for the response head")
        }
        buffer.removeFirst(head.length)

        let response = { (body: [UInt8]) in
            HTTPResponse(status: head.status, reason: head.reason, headers: head.headers, body: body)
        }
        if method.uppercased() == "HEAD" || (100...199).contains(head.status) || head.status == 204
            || head.status == 304
        {
            return response([])
        }
        if let coding = head.headers["transfer-encoding"], coding.lowercased().contains("chunked") {
            while true {
                if let body = try ChunkedDecoder.decode(buffer) { return response(body) }
                if eof { throw TestClientError.malformedHTTP("connection closed inside a chunked body") }
                try readMore("waiting for the rest of a chunked body")
            }
        }
        if let lengthText = head.headers["content-length"] {
            guard let length = Int(lengthText.trimmingCharacters(in: .whitespaces)), length >= 0 else {
                throw TestClientError.malformedHTTP("bad Content-Length \"\(lengthText)\"")
            }
            while buffer.count < length {
                if eof {
                    throw TestClientError.malformedHTTP(
                        "connection closed after \(buffer.count) of \(length) body bytes")
                }
                try readMore("waiting for \(length) body bytes")
            }
            return response(Array(buffer.prefix(length)))
        }
        while !eof { try readMore("waiting for the server to close the connection (body without length)") }
        return response(buffer)
    }
}

/// Decodes `Transfer-Encoding: chunked`.
enum ChunkedDecoder {
    /// The de-chunked body if `bytes` holds the complete encoding (through the last chunk and trailers),
    /// nil if more bytes are needed.
    static func decode(_ bytes: [UInt8]) throws -> [UInt8]? {
        var body: [UInt8] = []
        var position = 0
        func line() -> String? {
            guard position + 1 < bytes.count else { return nil }
            var index = position
            while index + 1 < bytes.count {
                if bytes[index] == 13 && bytes[index + 1] == 10 {
                    let text = String(decoding: bytes[position..<index], as: UTF8.self)
                    position = index + 2
                    return text
                }
                index += 1
            }
            return nil
        }
        while true {
            guard let sizeLine = line() else { return nil }
            let sizeText = sizeLine.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size >= 0 else {
                throw TestClientError.malformedHTTP("bad chunk size line \"\(sizeLine.prefix(100))\"")
            }
            if size == 0 {
                // Trailers, ended by an empty line.
                while true {
                    guard let trailer = line() else { return nil }
                    if trailer.isEmpty { return body }
                }
            }
            guard bytes.count >= position + size + 2 else { return nil }
            body += bytes[position..<(position + size)]
            position += size
            guard bytes[position] == 13 && bytes[position + 1] == 10 else {
                throw TestClientError.malformedHTTP("chunk of \(size) bytes not followed by CRLF")
            }
            position += 2
        }
    }
}
