// The HTTP endpoint's side of mounted services (`HTTPService` in CairnLoop, `HTTPMount`): assembling a request and its
// limits, handing it to the service off the service thread, and writing the reply in slices from writable
// callbacks, so neither a 20 MiB upload nor a 20 MiB file holds up the loop.
//
// Limits: a declared Content-Length over the mount's limit is answered 413 at once, before any body is buffered;
// a body that outgrows the limit anyway is answered 413 too. Bodies are buffered in memory, and the bytes of all
// bodies being received or handled are capped (`maxBufferedBodyBytes`, with a part kept for uploads and a part for
// trackers' reports: `BodyBudget`): a request that would exceed its share is answered 503 with Retry-After. Early
// answers are written in one piece from the callback that decided them; the rest of the body is then read and
// dropped (up to a bound) before closing, because closing a socket with unread input resets it and the client could
// lose the answer. A client that hangs up at any point leaves nothing: its
// buffer and budget are released, and a reply arriving later is dropped (an open file closes itself).
import CLws
import CairnLoop
import CairnWire
import Foundation

extension HTTPEndpoint {
    /// Bytes of a refused body read and dropped before the connection is closed anyway.
    static let maxDiscardBytes = 1 << 20
    /// Bytes of body kept while a request waits to be admitted (what arrived with the headers).
    static let earlyBodyBytes = 64 * 1024
    /// Bytes of a file or body written per writable callback.
    static let replySliceBytes = 64 * 1024
    /// Seconds a request may spend with its service, or a reply without progress, before the connection is dropped.
    static let exchangeTimeoutSeconds: Int32 = 60

    /// The mount for `path`, if any. A mount on `/` takes every path, except the transport's own routes.
    func mount(for path: String) -> HTTPMount? {
        mounts.first { $0.matches(path) && !($0.prefix == "/" && Self.ownRoutes.contains(path)) }
    }

    /// Starts an exchange for a request to a mounted service (from LWS_CALLBACK_HTTP). Returns the callback's result.
    func beginExchange(_ wsi: OpaquePointer, path: String, mount: HTTPMount) -> Int32 {
        let method = requestMethod(wsi)
        let lengthText = RequestHeaders.value(wsi, Int32(WSI_TOKEN_HTTP_CONTENT_LENGTH.rawValue))
        let request = HTTPRequest(
            method: method, path: path, query: queryString(wsi),
            authorization: RequestHeaders.value(wsi, cairn_lws_token_authorization()),
            contentType: RequestHeaders.value(wsi, Int32(WSI_TOKEN_HTTP_CONTENT_TYPE.rawValue)),
            contentLength: lengthText.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) },
            host: RequestHeaders.value(wsi, Int32(WSI_TOKEN_HOST.rawValue)),
            ifNoneMatch: RequestHeaders.value(wsi, Int32(WSI_TOKEN_HTTP_IF_NONE_MATCH.rawValue)))
        let exchange = HTTPExchange(serial: nextExchangeSerial, wsi: wsi, mount: mount, request: request)
        nextExchangeSerial += 1
        exchanges[UInt(bitPattern: wsi)] = exchange

        let hasBody = method == "POST" || method == "PUT" || method == "PATCH"
        if draining {
            return refuse(exchange, status: 503, message: "server shutting down", hasBody: hasBody)
        }
        guard hasBody else { return dispatch(exchange) }
        guard let lengthText else {
            return refuse(exchange, status: 411, message: "Content-Length required", hasBody: true)
        }
        guard let length = request.contentLength, length >= 0 else {
            return refuse(
                exchange, status: 400, message: "bad Content-Length \"\(lengthText.prefix(40))\"",
                hasBody: true)
        }
        if length > mount.maxBodyBytes {
            return refuse(exchange, status: 413, message: "body exceeds \(mount.maxBodyBytes) bytes", hasBody: true)
        }
        // The service decides from the headers whether the body may be read at all (an upload needs a valid
        // token). Until it has, the socket is not read and none of the body budget is reserved, so a client
        // without an account cannot make the server hold its bytes.
        exchange.phase = .admitting
        let expect = RequestHeaders.value(wsi, Int32(WSI_TOKEN_HTTP_EXPECT.rawValue))
        exchange.expectsContinue = expect?.lowercased().contains("100-continue") == true
        lws_rx_flow_control(wsi, 0)
        let service = mount.service
        let address = UInt(bitPattern: wsi)
        let serial = exchange.serial
        inFlight += 1
        lws_set_timeout(wsi, Self.exchangeTimeout, Self.exchangeTimeoutSeconds)
        Task.detached { [self, request] in
            let verdict = await service.admit(request)
            jobs.execute { [self] in admitted(verdict, address: address, serial: serial, length: length) }
        }
        return 0
    }

    /// Answers 429 to a request on a connection over its address's limit (`HTTPPeers`) and has the connection closed:
    /// a body is read and dropped as for every early answer, and a client that keeps the connection anyway is dropped
    /// after `closeTimeoutSeconds`.
    func refuseConnection(_ wsi: OpaquePointer, path: String, mount: HTTPMount?) -> Int32 {
        let message = "too many connections from your address; retry shortly"
        let retry = "\(configuration.busyRetryAfterSeconds)"
        lws_set_timeout(wsi, Self.exchangeTimeout, Int32(clamping: configuration.closeTimeoutSeconds))
        guard let mount else {
            return respond(
                wsi, status: 429, body: Self.errorBody(message),
                extraHeaders: [("retry-after:", retry), ("connection:", "close")])
        }
        let request = HTTPRequest(method: requestMethod(wsi), path: path)
        let exchange = HTTPExchange(serial: nextExchangeSerial, wsi: wsi, mount: mount, request: request)
        nextExchangeSerial += 1
        exchanges[UInt(bitPattern: wsi)] = exchange
        return refuse(exchange, status: 429, message: message, hasBody: true, headers: [("Retry-After", retry)])
    }

    /// The service's verdict on a request's headers: refuse it, or reserve its body's bytes and start reading.
    private func admitted(_ verdict: HTTPReply?, address: UInt, serial: UInt64, length: Int) {
        inFlight -= 1
        guard let exchange = exchanges[address], exchange.serial == serial, exchange.phase == .admitting else {
            return  // the client left meanwhile
        }
        if let refusal = verdict { return replyThenDiscard(exchange, refusal) }
        if draining { return replyThenDiscard(exchange, Self.errorReply(503, "server shutting down")) }
        if !bodies.fits(length, in: exchange.mount.pool) {
            return replyThenDiscard(
                exchange,
                Self.errorReply(
                    503, "too many uploads in progress; retry shortly",
                    headers: [
                        (
                            "Retry-After",
                            "\(configuration.busyRetryAfterSeconds)"
                        )
                    ]))
        }
        let wsi = exchange.wsi
        exchange.phase = .receiving
        exchange.reserved = length
        bodies.reserve(length, in: exchange.mount.pool)
        exchange.request.body.reserveCapacity(length)
        exchange.bodySince = MonotonicTime.now()
        lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0)  // the body's own bound is the sweep's (`bodyTimeoutSeconds`)
        lws_rx_flow_control(wsi, 1)
        if length == 0 || exchange.bodyComplete {
            if dispatch(exchange) != 0 { lws_set_timeout(wsi, PENDING_TIMEOUT_KILLED_BY_PARENT, LWS_TO_KILL_ASYNC) }
            return
        }
        // A client that asked to hear first (curl does, for bodies over 1 MiB) would otherwise wait a second.
        if exchange.expectsContinue {
            var interim = [UInt8](repeating: 0, count: Self.pre) + Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
            let count = interim.count - Self.pre
            let written = interim.withUnsafeMutableBufferPointer {
                lws_write(wsi, $0.baseAddress! + Self.pre, count, LWS_WRITE_HTTP_HEADERS)
            }
            if written < count { lws_set_timeout(wsi, PENDING_TIMEOUT_KILLED_BY_PARENT, LWS_TO_KILL_ASYNC) }
        }
    }

    /// Answers with `reply` at once, in one write (it is small); afterwards the body (if any) is read and dropped,
    /// up to a bound, and the connection closes, as for every early answer.
    private func replyThenDiscard(_ exchange: HTTPExchange, _ reply: HTTPReply) {
        release(exchange)
        guard case .bytes(let body) = reply.body else { return }
        let headers = reply.headers.map { ($0.name, $0.value) }
        lws_rx_flow_control(exchange.wsi, 1)
        if write(
            exchange, status: UInt32(reply.status), contentType: reply.contentType, body: body,
            headers: headers, hasBody: true) != 0
        {
            lws_set_timeout(exchange.wsi, PENDING_TIMEOUT_KILLED_BY_PARENT, LWS_TO_KILL_ASYNC)
        }
    }

    /// A small JSON error reply `{"error": message}`.
    static func errorReply(_ status: Int, _ message: String, headers: [(name: String, value: String)] = []) -> HTTPReply
    {
        HTTPReply(status: status, contentType: "application/json", headers: headers, body: .bytes(errorBody(message)))
    }

    /// Refuses bodies that have taken longer than `bodyTimeoutSeconds` (the sweep calls this once a second), so a
    /// client trickling bytes cannot hold its share of the body budget for ever.
    func expireSlowBodies(now: UInt64) {
        let limit = UInt64(configuration.bodyTimeoutSeconds) * 1_000_000_000
        for exchange in exchanges.values where exchange.phase == .receiving && now - exchange.bodySince > limit {
            replyThenDiscard(
                exchange,
                Self.errorReply(
                    408, "the request body took longer than \(configuration.bodyTimeoutSeconds) s"))
        }
    }

    /// A chunk of body (LWS_CALLBACK_HTTP_BODY). Returns the callback's result.
    func exchangeBody(_ wsi: OpaquePointer, bytes: UnsafeRawBufferPointer) -> Int32? {
        guard let exchange = exchanges[UInt(bitPattern: wsi)] else { return nil }
        switch exchange.phase {
        case .admitting:
            // Bytes that arrived with the headers, before the socket stopped being read: kept, within a bound.
            guard exchange.request.body.count + bytes.count <= Self.earlyBodyBytes else { return -1 }
            exchange.request.body.append(contentsOf: bytes)
            return 0
        case .receiving:
            if exchange.request.body.count + bytes.count > min(exchange.mount.maxBodyBytes, exchange.reserved) {
                release(exchange)
                return refuse(
                    exchange, status: 413, message: "body exceeds \(exchange.mount.maxBodyBytes) bytes",
                    hasBody: true)
            }
            exchange.request.body.append(contentsOf: bytes)
            return 0
        case .discarding:
            exchange.discarded += bytes.count
            return exchange.discarded > Self.maxDiscardBytes ? -1 : 0
        case .handling, .replying:
            return -1  // more body than was declared
        }
    }

    /// The body is complete (LWS_CALLBACK_HTTP_BODY_COMPLETION). Returns the callback's result.
    func exchangeBodyComplete(_ wsi: OpaquePointer) -> Int32? {
        guard let exchange = exchanges[UInt(bitPattern: wsi)] else { return nil }
        switch exchange.phase {
        case .admitting:
            exchange.bodyComplete = true  // small and early: handed over once admitted
            return 0
        case .receiving: return dispatch(exchange)
        case .discarding: return -1
        case .handling, .replying: return 0
        }
    }

    /// Forgets the exchange of a wsi that closed (CLOSED_HTTP / WSI_DESTROY).
    func dropExchange(_ wsi: OpaquePointer) {
        guard let exchange = exchanges.removeValue(forKey: UInt(bitPattern: wsi)) else { return }
        release(exchange)
    }

    /// Writes the next piece of a reply (LWS_CALLBACK_HTTP_WRITEABLE); nil if the wsi has no exchange replying.
    func writeExchange(_ wsi: OpaquePointer) -> Int32? {
        guard let exchange = exchanges[UInt(bitPattern: wsi)], exchange.phase == .replying,
            let reply = exchange.reply
        else { return nil }
        lws_set_timeout(wsi, Self.exchangeTimeout, Self.exchangeTimeoutSeconds)
        let total = reply.body.count
        let headOnly = exchange.request.method == "HEAD"
        if !exchange.headerSent {
            exchange.headerSent = true
            if writeReplyHead(wsi, reply) != 0 { return -1 }
            if headOnly || total == 0 { return finish(exchange) }
            lws_callback_on_writable(wsi)
            return 0
        }
        let count = min(Self.replySliceBytes, total - exchange.sent)
        let pre = Self.pre
        if replyScratch.count < pre + Self.replySliceBytes {
            replyScratch = [UInt8](repeating: 0, count: pre + Self.replySliceBytes)
        }
        let isFinal = exchange.sent + count == total
        let written: Int32 = replyScratch.withUnsafeMutableBufferPointer { buffer -> Int32 in
            let start = buffer.baseAddress! + pre
            switch reply.body {
            case .bytes(let bytes):
                bytes.withUnsafeBufferPointer { start.update(from: $0.baseAddress! + exchange.sent, count: count) }
            case .file(let file):
                var got = 0
                while got < count {
                    let n = pread(file.descriptor, start + got, count - got, off_t(exchange.sent + got))
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { return -1 }  // the file shrank or failed: the declared length cannot be met
                    got += n
                }
            }
            return lws_write(wsi, start, count, isFinal ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP)
        }
        if written < count { return -1 }
        exchange.sent += count
        if isFinal { return finish(exchange) }
        lws_callback_on_writable(wsi)
        return 0
    }

    // MARK: Private steps

    private static var exchangeTimeout: pending_timeout {
        pending_timeout(rawValue: PENDING_TIMEOUT_USER_REASON_BASE.rawValue + 2)
    }

    /// Hands the complete request to the service in a task; the reply comes back through the job queue.
    private func dispatch(_ exchange: HTTPExchange) -> Int32 {
        exchange.phase = .handling
        let request = exchange.request
        exchange.request.body = []
        let reserved = (exchange.reserved, exchange.mount.pool)
        exchange.reserved = 0  // now the task's; given back when its reply arrives
        let address = UInt(bitPattern: exchange.wsi)
        let serial = exchange.serial
        let service = exchange.mount.service
        inFlight += 1
        lws_set_timeout(exchange.wsi, Self.exchangeTimeout, Self.exchangeTimeoutSeconds)
        Task.detached { [self] in
            let reply = await service.handle(request)
            jobs.execute { [self] in deliver(reply, address: address, serial: serial, reserved: reserved) }
        }
        return 0
    }

    private func deliver(_ reply: HTTPReply, address: UInt, serial: UInt64, reserved: (Int, HTTPBodyPool)) {
        inFlight -= 1
        bodies.release(reserved.0, in: reserved.1)
        guard let exchange = exchanges[address], exchange.serial == serial, exchange.phase == .handling else {
            return  // the client left; the reply (and any open file in it) is dropped here
        }
        exchange.phase = .replying
        exchange.reply = reply
        lws_callback_on_writable(exchange.wsi)
    }

    private func finish(_ exchange: HTTPExchange) -> Int32 {
        exchanges[UInt(bitPattern: exchange.wsi)] = nil
        return lws_http_transaction_completed(exchange.wsi) != 0 ? -1 : 0
    }

    private func release(_ exchange: HTTPExchange) {
        bodies.release(exchange.reserved, in: exchange.mount.pool)
        exchange.reserved = 0
        exchange.request.body = []
    }

    /// Answers at once with a small JSON error, in one write, and then drops the rest of the body (if any) or
    /// completes the transaction.
    private func refuse(
        _ exchange: HTTPExchange, status: UInt32, message: String, hasBody: Bool,
        headers: [(String, String)] = []
    ) -> Int32 {
        write(
            exchange, status: status, contentType: "application/json", body: Self.errorBody(message),
            headers: headers, hasBody: hasBody)
    }

    /// Writes a small answer in one piece; with `hasBody` the rest of the request's body is then read and dropped
    /// and the connection closes, else the transaction completes.
    private func write(
        _ exchange: HTTPExchange, status: UInt32, contentType: String, body: [UInt8],
        headers: [(String, String)], hasBody: Bool
    ) -> Int32 {
        let wsi = exchange.wsi
        exchange.phase = .discarding
        var all = headers
        if !all.contains(where: { $0.0.lowercased() == "cache-control" }) { all.append(("Cache-Control", "no-store")) }
        if hasBody { all.append(("Connection", "close")) }
        let pre = Self.pre
        var buffer = [UInt8](repeating: 0, count: pre + 1024 + body.count)
        let result = buffer.withUnsafeMutableBufferPointer { b -> Int32 in
            let start = b.baseAddress! + pre
            var p: UnsafeMutablePointer<UInt8>? = start
            let end = b.baseAddress! + b.count - body.count - 1
            guard lws_add_http_header_status(wsi, status, &p, end) == 0,
                HTTPStatusLine.addMissingPhrase(status: status, start: start, p: &p, end: end),
                addHeader(wsi, "content-type", contentType, &p, end),
                addHeader(wsi, "content-length", "\(body.count)", &p, end),
                all.allSatisfy({ addHeader(wsi, $0.0, $0.1, &p, end) }),
                lws_finalize_http_header(wsi, &p, end) == 0, let q = p
            else { return -1 }
            body.withUnsafeBufferPointer { q.update(from: $0.baseAddress!, count: $0.count) }
            let length = q - start + body.count
            return lws_write(wsi, start, length, LWS_WRITE_HTTP_HEADERS) < length ? -1 : 0
        }
        if result != 0 { return -1 }
        if !hasBody { return finish(exchange) }
        return 0
    }

    private func writeReplyHead(_ wsi: OpaquePointer, _ reply: HTTPReply) -> Int32 {
        let pre = Self.pre
        var buffer = [UInt8](repeating: 0, count: pre + 2048)
        return buffer.withUnsafeMutableBufferPointer { b -> Int32 in
            let start = b.baseAddress! + pre
            var p: UnsafeMutablePointer<UInt8>? = start
            let end = b.baseAddress! + b.count - 1
            guard
                lws_add_http_common_headers(
                    wsi, UInt32(reply.status), reply.contentType,
                    lws_filepos_t(reply.body.count), &p, end) == 0,
                HTTPStatusLine.addMissingPhrase(status: UInt32(reply.status), start: start, p: &p, end: end),
                reply.headers.allSatisfy({ addHeader(wsi, $0.name, $0.value, &p, end) })
            else { return -1 }
            return lws_finalize_write_http_header(wsi, start, &p, end) == 0 ? 0 : -1
        }
    }

    private func addHeader(
        _ wsi: OpaquePointer, _ name: String, _ value: String,
        _ p: inout UnsafeMutablePointer<UInt8>?, _ end: UnsafeMutablePointer<UInt8>
    ) -> Bool {
        let field = name.lowercased() + ":"
        return lws_add_http_header_by_name(wsi, field, value, Int32(value.utf8.count), &p, end) == 0
    }

    private func requestMethod(_ wsi: OpaquePointer) -> String {
        let methods: [(lws_token_indexes, String)] = [
            (WSI_TOKEN_GET_URI, "GET"), (WSI_TOKEN_POST_URI, "POST"), (WSI_TOKEN_HEAD_URI, "HEAD"),
            (WSI_TOKEN_PUT_URI, "PUT"), (WSI_TOKEN_PATCH_URI, "PATCH"), (WSI_TOKEN_DELETE_URI, "DELETE"),
            (WSI_TOKEN_OPTIONS_URI, "OPTIONS"),
        ]
        for (token, name) in methods where cairn_lws_header_length(wsi, Int32(token.rawValue)) > 0 { return name }
        return "GET"
    }

    /// The query string, rebuilt from lws's URL-decoded arguments joined by `&`; nil if there was none.
    private func queryString(_ wsi: OpaquePointer) -> String? {
        var parts: [String] = []
        var buffer = [CChar](repeating: 0, count: 1024)
        var index: Int32 = 0
        while index < 32 {
            let n = buffer.withUnsafeMutableBufferPointer {
                lws_hdr_copy_fragment(wsi, $0.baseAddress, Int32($0.count), WSI_TOKEN_HTTP_URI_ARGS, index)
            }
            if n < 0 { break }
            if n > 0 {
                parts.append(String(decoding: buffer.prefix(Int(n)).map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
            index += 1
        }
        return parts.isEmpty ? nil : parts.joined(separator: "&")
    }
}
