// Why this exists: the opening handshake of RFC 6455 section 4 — a random Sec-WebSocket-Key, the upgrade
// request, and a strict check of the server's 101 answer (Sec-WebSocket-Accept computed with OpenSSL's SHA-1,
// Upgrade/Connection headers, the echoed subprotocol, no unrequested extensions). Kept apart from the framing so
// each can be read against its own section of the RFC.

import COpenSSL
import Foundation

/// The client side of the WebSocket opening handshake.
public enum WebSocketHandshake {
    /// The GUID RFC 6455 appends to the key before hashing.
    public static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// A fresh Sec-WebSocket-Key: 16 random bytes, base64.
    public static func makeKey() -> String {
        Data(ClientRandom.bytes(16)).base64EncodedString()
    }

    /// The Sec-WebSocket-Accept a server must answer for `key`: base64(SHA-1(key + GUID)).
    public static func acceptValue(forKey key: String) -> String {
        let input = Array((key + guid).utf8)
        var digest = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
        input.withUnsafeBufferPointer { inputBuffer in
            digest.withUnsafeMutableBufferPointer { digestBuffer in
                _ = SHA1(inputBuffer.baseAddress, inputBuffer.count, digestBuffer.baseAddress)
            }
        }
        return Data(digest).base64EncodedString()
    }

    /// The upgrade request. Entries in `headers` replace the default header of the same (case-insensitive) name,
    /// so a test can send e.g. a wrong `Sec-WebSocket-Version` on purpose.
    static func request(
        host: String, port: Int, path: String, key: String, subprotocol: String?,
        headers: [String: String]
    ) -> [UInt8] {
        var fields: [(String, String)] = [
            ("Host", "\(host):\(port)"),
            ("Upgrade", "websocket"),
            ("Connection", "Upgrade"),
            ("Sec-WebSocket-Key", key),
            ("Sec-WebSocket-Version", "13"),
        ]
        if let subprotocol { fields.append(("Sec-WebSocket-Protocol", subprotocol)) }
        let overridden = Set(headers.keys.map { $0.lowercased() })
        fields.removeAll { overridden.contains($0.0.lowercased()) }
        fields += headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }

        var text = "GET \(path) HTTP/1.1\r\n"
        for (name, value) in fields { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// Checks a `101` answer. Returns the negotiated subprotocol (nil if none).
    static func validate(_ head: HTTPResponseHead, key: String, requestedSubprotocol: String?) throws -> String? {
        let headers = head.headers
        func tokens(_ value: String?) -> [String] {
            (value ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        }
        guard tokens(headers["upgrade"]).contains("websocket") else {
            throw TestClientError.handshakeInvalid(
                "Upgrade header is \(headers["upgrade"].map { "\"\($0)\"" } ?? "missing")")
        }
        guard tokens(headers["connection"]).contains("upgrade") else {
            throw TestClientError.handshakeInvalid(
                "Connection header is \(headers["connection"].map { "\"\($0)\"" } ?? "missing")")
        }
        let expected = acceptValue(forKey: key)
        guard headers["sec-websocket-accept"] == expected else {
            throw TestClientError.handshakeInvalid(
                "Sec-WebSocket-Accept is \(headers["sec-websocket-accept"].map { "\"\($0)\"" } ?? "missing"), "
                    + "expected \"\(expected)\"")
        }
        if let extensions = headers["sec-websocket-extensions"], !extensions.isEmpty {
            throw TestClientError.handshakeInvalid("server chose extensions \"\(extensions)\" that were not offered")
        }
        let chosen = headers["sec-websocket-protocol"]
        guard let requestedSubprotocol else {
            if let chosen {
                throw TestClientError.handshakeInvalid("server chose subprotocol \"\(chosen)\" but none was offered")
            }
            return nil
        }
        let offered = requestedSubprotocol.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let chosen else {
            throw TestClientError.handshakeInvalid(
                "no Sec-WebSocket-Protocol in the answer; offered \"\(requestedSubprotocol)\"")
        }
        guard offered.contains(chosen) else {
            throw TestClientError.handshakeInvalid(
                "server chose subprotocol \"\(chosen)\", offered \"\(requestedSubprotocol)\"")
        }
        return chosen
    }
}
