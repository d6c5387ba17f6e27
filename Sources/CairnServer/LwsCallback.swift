// The single C callback libwebsockets calls for every event of the `cairn.v1` protocol, HTTP included (protocol 0
// receives HTTP when no mount matches). It finds the server through the context's user pointer and hands each
// event to the side it belongs to: WebSocket events to the server's `WebSocketEndpoint`, HTTP events to its
// `HTTPEndpoint`, the wake-up to the job queue. Everything here runs on the service thread, which the dispatch
// asserts. Unhandled HTTP reasons go to lws_callback_http_dummy, which does lws's default housekeeping.
import CLws
import CairnLoop

let cairnLwsCallback:
    @convention(c) (
        OpaquePointer?, lws_callback_reasons, UnsafeMutableRawPointer?,
        UnsafeMutableRawPointer?, Int
    ) -> Int32 = { wsi, reason, user, input, length in
        guard let wsi, let contextUser = lws_context_user(lws_get_context(wsi)) else { return 0 }
        let server = Unmanaged<TransportServer>.fromOpaque(contextUser).takeUnretainedValue()
        server.confinement.assertOnLoop()
        let webSockets = server.webSockets
        let http = server.http

        switch reason {
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            let observer = server.observer
            server.jobs.drain { observer.loopLag(nanoseconds: $0) }
            return 0  // anything else stops further wake-ups

        case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
            return webSockets.filterUpgrade(wsi)

        case LWS_CALLBACK_ESTABLISHED:
            guard let user else { return -1 }
            webSockets.opened(wsi: wsi, session: user)
            return 0

        case LWS_CALLBACK_RECEIVE:
            guard let state = webSockets.connection(for: user) else { return -1 }
            let bytes = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
            webSockets.received(state, bytes: bytes)
            return 0

        case LWS_CALLBACK_RECEIVE_PONG:
            if let state = webSockets.connection(for: user) { webSockets.heard(state) }
            return 0

        case LWS_CALLBACK_SERVER_WRITEABLE:
            guard let state = webSockets.connection(for: user) else { return 0 }
            return webSockets.writable(state) ? 0 : -1

        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            if let state = webSockets.connection(for: user) { webSockets.peerClosing(state) }
            return 0  // lws answers the close

        case LWS_CALLBACK_CLOSED:
            // An upgrade can fail after the filter stored a token (lws then reports CLOSED, not CLOSED_HTTP).
            webSockets.forget(wsi)
            webSockets.closed(user)
            return 0

        case LWS_CALLBACK_WSI_DESTROY:
            webSockets.forget(wsi)
            http.forget(wsi)

        case LWS_CALLBACK_HTTP:
            // `length` is the decoded path's length: read that many bytes, so a `%00` in it stays in the path (and
            // matches nothing) instead of cutting it short.
            guard let input else { return http.serve(wsi, path: "/") }
            let path =
                length > 0
                ? String(decoding: UnsafeRawBufferPointer(start: input, count: length), as: UTF8.self)
                : String(cString: input.assumingMemoryBound(to: CChar.self))
            return http.serve(wsi, path: path)

        case LWS_CALLBACK_HTTP_BODY:
            let bytes = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
            if let result = http.exchangeBody(wsi, bytes: bytes) { return result }

        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            if let result = http.exchangeBodyComplete(wsi) { return result }

        case LWS_CALLBACK_HTTP_WRITEABLE:
            return http.writable(wsi)

        case LWS_CALLBACK_CLOSED_HTTP:
            http.forget(wsi)
            webSockets.forget(wsi)

        default:
            break
        }
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
