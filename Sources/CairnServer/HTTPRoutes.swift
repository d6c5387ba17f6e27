// Plain HTTP on the transport's port: `GET /healthz` (a small JSON body for load balancers and humans; 503 while
// draining), `GET /metrics` (Prometheus text rendered by whoever set `metricsRenderer`, behind an optional bearer
// token; see `MetricsAccess`), a hint on `/ws` without an upgrade, and JSON 404/405 for the rest; mounted services
// are matched before these (HTTPEndpoint+Services.swift). Headers go out in the HTTP callback and the body in the
// following writable callback: one lws_write per callback.
import CLws
import CairnLoop
import CairnWire

/// What `/healthz` reports besides the draining flag: the handler's counts and the transport's own.
struct HealthFigures {
    /// Connections, authenticated, watching and positions, as the connection handler counts them.
    var handler: HandlerHealth
    /// Bytes waiting to be written, over all WebSocket connections.
    var pendingOutboundBytes: Int
    /// Seconds since the server was created.
    var uptimeSeconds: Double
}

extension HTTPEndpoint {
    /// The paths the transport answers itself, whatever is mounted on `/`.
    static let ownRoutes: Set<String> = ["/healthz", "/metrics", "/ws", "/ws/"]

    /// Answers a request for one of the transport's own paths.
    func route(_ wsi: OpaquePointer, path: String) -> Int32 {
        let isGet = cairn_lws_header_length(wsi, cairn_lws_token_get_uri()) > 0
        var w = JSONWriter(capacity: 256)
        let status: UInt32
        switch path {
        case "/healthz":
            guard isGet else { return respond(wsi, status: 405, body: Self.errorBody("method not allowed")) }
            status = draining ? 503 : 200
            let figures = health()
            w.beginObject()
            w.key("status")
            w.string(draining ? "draining" : "ok")
            w.key("connections")
            w.int(Int64(figures.handler.connections))
            w.key("authenticated")
            w.int(Int64(figures.handler.authenticated))
            w.key("watching")
            w.int(Int64(figures.handler.watching))
            w.key("positions")
            w.int(Int64(figures.handler.positions))
            w.key("pending_bytes")
            w.int(Int64(figures.pendingOutboundBytes))
            w.key("uptime_s")
            w.double((figures.uptimeSeconds * 10).rounded() / 10)
            w.key("protocol")
            w.string("cairn.v1")
            if let cluster = figures.handler.cluster {  // several nodes only: "ok" or "degraded" (still 200)
                w.key("cluster")
                w.string(cluster)
            }
            w.endObject()
        case "/metrics":
            return serveMetrics(wsi, isGet: isGet)
        case "/ws", "/ws/":
            return respond(wsi, status: 400, body: Self.errorBody("WebSocket upgrade required (subprotocol cairn.v1)"))
        default:
            return respond(wsi, status: 404, body: Self.errorBody("not found"))
        }
        return respond(wsi, status: status, body: w.bytes)
    }

    private func serveMetrics(_ wsi: OpaquePointer, isGet: Bool) -> Int32 {
        guard isGet else { return respond(wsi, status: 405, body: Self.errorBody("method not allowed")) }
        switch MetricsAccess.decide(
            token: configuration.metricsToken, presented: RequestHeaders.bearerToken(wsi),
            host: configuration.host, peer: RequestHeaders.peerAddress(wsi))
        {
        case .granted:
            break
        case .tokenRequired:
            return respond(
                wsi, status: 401, body: Self.errorBody("a bearer token is required for /metrics"),
                extraHeaders: [("www-authenticate:", "Bearer")])
        case .localOnly:
            return respond(
                wsi, status: 403,
                body: Self.errorBody(
                    "/metrics is served to this machine only unless metrics.token is set"))
        }
        guard let render = metricsRenderer else { return respond(wsi, status: 404, body: Self.errorBody("not found")) }
        return respond(wsi, status: 200, body: render(), contentType: "text/plain; version=0.0.4; charset=utf-8")
    }
}
