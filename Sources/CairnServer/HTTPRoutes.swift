// Plain HTTP on the hub's port: `GET /healthz` (a small JSON body for load balancers and humans; 503 while
// draining), a hint on `/ws` without an upgrade, mounted services (WebSocketServer+HTTPService.swift), and JSON
// 404/405 for the rest. Headers go out in the HTTP callback and the body in the following writable callback: one
// lws_write per callback.
import CLws
import CairnWire
import Foundation

extension WebSocketServer {
    func serveHTTP(_ wsi: OpaquePointer, path: String) -> Int32 {
        if let mount = mount(for: path) { return beginExchange(wsi, path: path, mount: mount) }
        let isGet = cairn_lws_header_length(wsi, cairn_lws_token_get_uri()) > 0
        var w = JSONWriter(capacity: 256)
        let status: UInt32
        switch path {
        case "/healthz":
            guard isGet else { return respond(wsi, status: 405, body: Self.errorBody("method not allowed")) }
            status = draining ? 503 : 200
            w.beginObject()
            w.key("status"); w.string(draining ? "draining" : "ok")
            w.key("connections"); w.int(Int64(hub.connectionCount))
            w.key("authenticated"); w.int(Int64(hub.authenticatedCount))
            w.key("watching"); w.int(Int64(hub.watchingCount))
            w.key("positions"); w.int(Int64(hub.livePositions))
            w.key("pending_bytes"); w.int(Int64(pendingOutboundBytes))
            w.key("uptime_s"); w.double((uptimeSeconds * 10).rounded() / 10)
            w.key("protocol"); w.string("cairn.v1")
            w.endObject()
        case "/ws", "/ws/":
            return respond(wsi, status: 400, body: Self.errorBody("WebSocket upgrade required (subprotocol cairn.v1)"))
        default:
            return respond(wsi, status: 404, body: Self.errorBody("not found"))
        }
        return respond(wsi, status: status, body: w.bytes)
    }

    static func errorBody(_ message: String) -> [UInt8] {
        var w = JSONWriter(capacity: 128)
        w.beginObject(); w.key("error"); w.string(message); w.endObject()
        return w.bytes
    }

    func respond(_ wsi: OpaquePointer, status: UInt32, body: [UInt8]) -> Int32 {
        let pre = ConnectionState.pre
        var header = [UInt8](repeating: 0, count: pre + 1024)
        let failed = header.withUnsafeMutableBufferPointer { b -> Bool in
            let start = b.baseAddress! + pre
            var p: UnsafeMutablePointer<UInt8>? = start
            let end = b.baseAddress! + b.count - 1
            if lws_add_http_common_headers(wsi, status, "application/json", lws_filepos_t(body.count), &p, end) != 0 {
                return true
            }
            let noStore = "no-store"
            if lws_add_http_header_by_name(wsi, "cache-control:", noStore, Int32(noStore.utf8.count), &p, end) != 0 {
                return true
            }
            return lws_finalize_write_http_header(wsi, start, &p, end) != 0
        }
        if failed { return 1 }
        pendingHTTP[UInt(bitPattern: wsi)] = body
        lws_callback_on_writable(wsi)
        return 0
    }

    func writeHTTPBody(_ wsi: OpaquePointer) -> Int32 {
        guard let body = pendingHTTP.removeValue(forKey: UInt(bitPattern: wsi)) else { return 0 }
        let pre = ConnectionState.pre
        var buffer = [UInt8](repeating: 0, count: pre)
        buffer.append(contentsOf: body)
        let written = buffer.withUnsafeMutableBufferPointer {
            lws_write(wsi, $0.baseAddress! + pre, body.count, LWS_WRITE_HTTP_FINAL)
        }
        if written < body.count { return -1 }
        return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
    }
}
