// The HTTP side of the port: every request that is not a WebSocket upgrade. It answers its own routes
// (HTTPRoutes.swift) with small bodies, and runs exchanges with mounted services (HTTPEndpoint+Services.swift)
// within the body budgets, for at most so many connections per source address (`HTTPPeers`). It owns what it keeps
// per wsi (a pending small body, an exchange, the connection's place in the count) and forgets it when lws reports the
// wsi gone. Everything here runs on the service thread; a service's reply comes back through the
// server's job queue.
import CLws
import CairnLoop
import CairnWire

/// Plain HTTP on the transport's port. Loop thread only: `@unchecked Sendable` because a service's task carries it
/// off the loop only to queue the reply's delivery back onto it (`jobs`), never to touch its state.
final class HTTPEndpoint: @unchecked Sendable {
    static let pre = Int(cairn_lws_pre())

    let configuration: ServerConfiguration
    let mounts: [HTTPMount]
    /// Where services' replies come back onto the loop.
    let jobs: LoopJobQueue
    /// The figures `/healthz` reports; read on the loop at each request.
    let health: () -> HealthFigures

    /// Renders the body of `GET /metrics`; without it the route answers 404. Set before the server starts.
    var metricsRenderer: (() -> [UInt8])?
    /// Set at shutdown: `/healthz` answers 503 and services take no new requests.
    var draining = false

    /// Bodies of route replies waiting for their writable callback, by wsi address.
    var pendingBodies: [UInt: [UInt8]] = [:]
    /// Requests to mounted services, by wsi address.
    var exchanges: [UInt: HTTPExchange] = [:]
    var nextExchangeSerial: UInt64 = 1
    /// Bytes of request bodies being received or handled, over all exchanges, per pool (`BodyBudget`).
    var bodies: BodyBudget
    /// Open connections per source address (`HTTPPeers`).
    var peers: HTTPPeers
    /// Requests handed to services whose replies have not come back yet.
    var inFlight = 0
    var replyScratch: [UInt8] = []

    init(
        configuration: ServerConfiguration, mounts: [HTTPMount], jobs: LoopJobQueue,
        health: @escaping () -> HealthFigures
    ) {
        self.configuration = configuration
        self.mounts = mounts
        self.jobs = jobs
        self.health = health
        bodies = BodyBudget(configuration: configuration)
        peers = HTTPPeers(configuration: configuration)
    }

    /// A request arrived (LWS_CALLBACK_HTTP). Returns the callback's result.
    func serve(_ wsi: OpaquePointer, path: String) -> Int32 {
        let mount = mount(for: path)
        guard peers.admit(UInt(bitPattern: wsi), peer: RequestHeaders.peerAddress(wsi)) else {
            return refuseConnection(wsi, path: path, mount: mount)
        }
        if let mount { return beginExchange(wsi, path: path, mount: mount) }
        return route(wsi, path: path)
    }

    /// The wsi can take more (LWS_CALLBACK_HTTP_WRITEABLE): the next piece of an exchange's reply, or a route's
    /// body. Returns the callback's result.
    func writable(_ wsi: OpaquePointer) -> Int32 {
        if let result = writeExchange(wsi) { return result }
        return writeBody(wsi)
    }

    /// Forgets what was kept for a wsi that closed (CLOSED_HTTP / WSI_DESTROY).
    func forget(_ wsi: OpaquePointer) {
        peers.forget(UInt(bitPattern: wsi))
        dropExchange(wsi)
        pendingBodies[UInt(bitPattern: wsi)] = nil
    }

    // MARK: Small replies

    static func errorBody(_ message: String) -> [UInt8] {
        var w = JSONWriter(capacity: 128)
        w.beginObject()
        w.key("error")
        w.string(message)
        w.endObject()
        return w.bytes
    }

    /// Writes the headers now and keeps `body` for the next writable callback.
    func respond(
        _ wsi: OpaquePointer, status: UInt32, body: [UInt8], contentType: String = "application/json",
        extraHeaders: [(name: String, value: String)] = []
    ) -> Int32 {
        let pre = Self.pre
        var header = [UInt8](repeating: 0, count: pre + 1024)
        let failed = header.withUnsafeMutableBufferPointer { b -> Bool in
            let start = b.baseAddress! + pre
            var p: UnsafeMutablePointer<UInt8>? = start
            let end = b.baseAddress! + b.count - 1
            if lws_add_http_common_headers(wsi, status, contentType, lws_filepos_t(body.count), &p, end) != 0
                || !HTTPStatusLine.addMissingPhrase(status: status, start: start, p: &p, end: end)
            {
                return true
            }
            for (name, value) in extraHeaders
            where lws_add_http_header_by_name(wsi, name, value, Int32(value.utf8.count), &p, end) != 0 {
                return true
            }
            let noStore = "no-store"
            if lws_add_http_header_by_name(wsi, "cache-control:", noStore, Int32(noStore.utf8.count), &p, end) != 0 {
                return true
            }
            return lws_finalize_write_http_header(wsi, start, &p, end) != 0
        }
        if failed { return 1 }
        pendingBodies[UInt(bitPattern: wsi)] = body
        lws_callback_on_writable(wsi)
        return 0
    }

    private func writeBody(_ wsi: OpaquePointer) -> Int32 {
        guard let body = pendingBodies.removeValue(forKey: UInt(bitPattern: wsi)) else { return 0 }
        let pre = Self.pre
        var buffer = [UInt8](repeating: 0, count: pre)
        buffer.append(contentsOf: body)
        let written = buffer.withUnsafeMutableBufferPointer {
            lws_write(wsi, $0.baseAddress! + pre, body.count, LWS_WRITE_HTTP_FINAL)
        }
        if written < body.count { return -1 }
        return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
    }
}
