// Reading the headers of the request lws is handling, shared by the WebSocket upgrade (a bearer token may come
// with it) and plain HTTP (services, `/metrics`). Service thread only, inside the callback for that request.
import CLws
import Foundation

enum RequestHeaders {
    /// The value of header `token` (an lws token index), or nil if absent or implausibly long.
    static func value(_ wsi: OpaquePointer, _ token: Int32) -> String? {
        let length = Int(cairn_lws_header_length(wsi, token))
        guard length > 0, length < 8192 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        let copied = buffer.withUnsafeMutableBufferPointer {
            lws_hdr_copy(wsi, $0.baseAddress, Int32($0.count), lws_token_indexes(rawValue: UInt32(token)))
        }
        guard copied >= 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The token of an `Authorization: Bearer <token>` header, if present.
    static func bearerToken(_ wsi: OpaquePointer) -> String? {
        guard let auth = value(wsi, cairn_lws_token_authorization()) else { return nil }
        let parts = auth.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1]).trimmingCharacters(in: .whitespaces)
    }

    /// The peer's address as text (`127.0.0.1`, `::1`, `::ffff:10.0.0.5`), if lws knows it.
    static func peerAddress(_ wsi: OpaquePointer) -> String? {
        var buffer = [CChar](repeating: 0, count: 64)
        let text = buffer.withUnsafeMutableBufferPointer { b -> String? in
            guard let found = lws_get_peer_simple(wsi, b.baseAddress, b.count) else { return nil }
            return String(cString: found)
        }
        return text.flatMap { $0.isEmpty ? nil : $0 }
    }
}
