// The single C callback libwebsockets calls for every event of the `cairn.v1` protocol, HTTP included (protocol 0
// receives HTTP when no mount matches). It finds the server through the context's user pointer and forwards each
// event; everything here runs on the service thread. Unhandled HTTP reasons go to lws_callback_http_dummy, which
// does lws's default housekeeping.
import CLws
import CairnWire
import Foundation

let cairnLwsCallback: @convention(c) (OpaquePointer?, lws_callback_reasons, UnsafeMutableRawPointer?,
                                      UnsafeMutableRawPointer?, Int) -> Int32 = { wsi, reason, user, input, length in
    guard let wsi, let contextUser = lws_context_user(lws_get_context(wsi)) else { return 0 }
    let server = Unmanaged<WebSocketServer>.fromOpaque(contextUser).takeUnretainedValue()

    switch reason {
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
        server.jobs.drain()
        return 0  // anything else stops further wake-ups

    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
        return server.filterUpgrade(wsi)

    case LWS_CALLBACK_ESTABLISHED:
        guard let user else { return -1 }
        server.opened(wsi: wsi, session: user)
        return 0

    case LWS_CALLBACK_RECEIVE:
        guard let state = server.connection(for: user) else { return -1 }
        let bytes = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
        server.received(state, bytes: bytes)
        return 0

    case LWS_CALLBACK_SERVER_WRITEABLE:
        guard let state = server.connection(for: user) else { return 0 }
        return server.writable(state) ? 0 : -1

    case LWS_CALLBACK_CLOSED:
        // An upgrade can fail after the filter stored a token (lws then reports CLOSED, not CLOSED_HTTP): the token
        // must not outlive this wsi, or the next connection given the same address would inherit it.
        server.pendingTokens[UInt(bitPattern: wsi)] = nil
        server.closed(user)
        return 0

    case LWS_CALLBACK_WSI_DESTROY:
        server.pendingTokens[UInt(bitPattern: wsi)] = nil
        server.pendingHTTP[UInt(bitPattern: wsi)] = nil
        server.dropExchange(wsi)

    case LWS_CALLBACK_HTTP:
        let path = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "/"
        return server.serveHTTP(wsi, path: path)

    case LWS_CALLBACK_HTTP_BODY:
        let bytes = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
        if let result = server.exchangeBody(wsi, bytes: bytes) { return result }

    case LWS_CALLBACK_HTTP_BODY_COMPLETION:
        if let result = server.exchangeBodyComplete(wsi) { return result }

    case LWS_CALLBACK_HTTP_WRITEABLE:
        if let result = server.writeExchange(wsi) { return result }
        return server.writeHTTPBody(wsi)

    case LWS_CALLBACK_CLOSED_HTTP:
        server.dropExchange(wsi)
        server.pendingHTTP[UInt(bitPattern: wsi)] = nil
        server.pendingTokens[UInt(bitPattern: wsi)] = nil
        break

    default:
        break
    }
    return lws_callback_http_dummy(wsi, reason, user, input, length)
}

extension WebSocketServer {
    /// Accepts WebSocket upgrades only on `/ws` and remembers a bearer token from the header or `?token=`.
    func filterUpgrade(_ wsi: OpaquePointer) -> Int32 {
        let path = header(wsi, cairn_lws_token_get_uri()) ?? ""
        guard path == "/ws" || path == "/ws/" else {
            logger.debug("refused WebSocket upgrade on \(path)")
            return 1
        }
        if let auth = header(wsi, cairn_lws_token_authorization()) {
            let parts = auth.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" {
                pendingTokens[UInt(bitPattern: wsi)] = String(parts[1]).trimmingCharacters(in: .whitespaces)
                return 0
            }
        }
        var buffer = [CChar](repeating: 0, count: 256)
        let found = buffer.withUnsafeMutableBufferPointer { b -> String? in
            guard let value = lws_get_urlarg_by_name(wsi, "token=", b.baseAddress, Int32(b.count)) else { return nil }
            return String(cString: value)
        }
        if let found, !found.isEmpty { pendingTokens[UInt(bitPattern: wsi)] = found }
        return 0
    }

    func header(_ wsi: OpaquePointer, _ token: Int32) -> String? {
        let length = Int(cairn_lws_header_length(wsi, token))
        guard length > 0, length < 8192 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        let copied = buffer.withUnsafeMutableBufferPointer {
            lws_hdr_copy(wsi, $0.baseAddress, Int32($0.count), lws_token_indexes(rawValue: UInt32(token)))
        }
        guard copied >= 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
