// Why this exists: the HTTP answer a test inspects (from HTTPClient, or a refused WebSocket upgrade), plus the
// parsing of a response head that both clients share: status line and headers, with header names lowercased so
// tests can look them up without guessing the server's capitalisation.

import Foundation

/// A complete HTTP response.
public struct HTTPResponse: Equatable, Sendable {
    /// The status code, e.g. 200.
    public var status: Int
    /// The reason phrase from the status line (may be empty).
    public var reason: String
    /// Header fields with lowercased names; repeated fields are joined with ", ".
    public var headers: [String: String]
    /// The body, already de-chunked.
    public var body: [UInt8]

    /// The body decoded as UTF-8 (invalid sequences become U+FFFD).
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed as a JSON object; throws `TestClientError.malformedJSON` otherwise.
    public func jsonObject() throws -> [String: Any] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw TestClientError.malformedJSON("HTTP \(status) body is not a JSON object: \(text.prefix(500))")
        }
        return object
    }

    /// Builds a response (tests rarely need this; the clients build them).
    public init(status: Int, reason: String = "", headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
    }
}

/// The status line and header block of a response, parsed from the front of a receive buffer.
struct HTTPResponseHead {
    static let maxHeadBytes = 64 * 1024

    var status: Int
    var reason: String
    var headers: [String: String]
    /// Bytes the head occupied, including the blank line that ends it.
    var length: Int

    /// Parses the head at the start of `buffer`. Returns nil if the blank line that ends it has not arrived yet.
    static func parse(_ buffer: [UInt8]) throws -> HTTPResponseHead? {
        guard let end = findHeadEnd(buffer) else {
            if buffer.count > maxHeadBytes {
                throw TestClientError.malformedHTTP("no end of headers within \(maxHeadBytes) bytes")
            }
            return nil
        }
        let headText = String(decoding: buffer[0..<end], as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]),
            (100...999).contains(status)
        else {
            throw TestClientError.malformedHTTP("bad status line \"\(statusLine.prefix(200))\"")
        }
        let reason = parts.count > 2 ? String(parts[2]) : ""

        var headers: [String: String] = [:]
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else {
                throw TestClientError.malformedHTTP("bad header line \"\(line.prefix(200))\"")
            }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if let existing = headers[name] {
                headers[name] = existing + ", " + value
            } else {
                headers[name] = value
            }
        }
        return HTTPResponseHead(status: status, reason: reason, headers: headers, length: end + 4)
    }

    /// Index of the "\r\n\r\n" that ends the head.
    private static func findHeadEnd(_ buffer: [UInt8]) -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4)
        where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }
}
