// A WebSocket client for command-line tools (`cairn stats`), on libwebsockets' client role. The hub already
// links libwebsockets, so the client uses the same library, with its handshake, masking, fragmentation, ping
// handling and TLS (wss://), instead of a second hand-written RFC 6455 implementation; the blocking client in
// the tests stays a deliberately strict loopback-only test tool. One connection per instance; `run` drives the
// lws service loop on the calling thread until the connection ends, and every callback runs on that thread.
// `requestStop` is the one call another thread (a signal waiter) may make: it sets a flag and wakes the loop with
// lws_cancel_service, the only lws call that is safe across threads in this build.
import CLws
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Where to connect: parsed from a `ws://` or `wss://` URL.
public struct WebSocketEndpoint: Sendable, Equatable {
    /// Host name or address.
    public var host: String
    /// TCP port.
    public var port: Int
    /// Request path, query included.
    public var path: String
    /// True for wss:// (TLS).
    public var secure: Bool

    /// Parses `ws://host[:port][/path]` or `wss://…`; the default port is 80 or 443, the default path `/ws`.
    public init(url: String) throws(WebSocketClientError) {
        let secure: Bool
        var rest: Substring
        if url.hasPrefix("ws://") {
            secure = false
            rest = url.dropFirst(5)
        } else if url.hasPrefix("wss://") {
            secure = true
            rest = url.dropFirst(6)
        } else {
            throw .badURL(url, "the URL must start with ws:// or wss://")
        }
        var path = "/ws"
        if let slash = rest.firstIndex(of: "/") {
            path = String(rest[slash...])
            rest = rest[..<slash]
        }
        var host = String(rest)
        var port = secure ? 443 : 80
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { throw .badURL(url, "unclosed IPv6 address") }
            let after = host[host.index(after: close)...]
            if after.hasPrefix(":") {
                guard let p = Int(after.dropFirst()), (1...65535).contains(p) else { throw .badURL(url, "bad port") }
                port = p
            }
            host = String(host[host.index(after: host.startIndex)..<close])
        } else if let colon = host.lastIndex(of: ":") {
            guard let p = Int(host[host.index(after: colon)...]), (1...65535).contains(p) else {
                throw .badURL(url, "bad port")
            }
            port = p
            host = String(host[..<colon])
        }
        guard !host.isEmpty else { throw .badURL(url, "missing host") }
        self.host = host
        self.port = port
        self.path = path
        self.secure = secure
    }
}

/// Why a client connection could not be made or ended abnormally.
public enum WebSocketClientError: Error, CustomStringConvertible, Equatable {
    /// The URL is not a WebSocket URL.
    case badURL(String, String)
    /// libwebsockets could not set up a client context.
    case contextCreationFailed
    /// The connection or its handshake failed.
    case connectFailed(String)

    /// A readable explanation.
    public var description: String {
        switch self {
        case .badURL(let url, let why): "bad URL '\(url)': \(why)"
        case .contextCreationFailed: "cannot create a WebSocket client context"
        case .connectFailed(let why): "connection failed: \(why)"
        }
    }
}

/// A single WebSocket client connection driven on the calling thread.
public final class LwsWebSocketClient: @unchecked Sendable {
    // `@unchecked Sendable`: everything but `stopRequested` and `contextAddress` is touched only by the thread in
    // `run`; those two are atomic/locked.

    /// What the connection reports to `run`'s handler.
    public enum Event {
        /// The handshake completed; messages may be sent.
        case opened
        /// A complete text message arrived.
        case message(String)
    }

    /// How the connection ended.
    public struct Ending: Sendable, Equatable {
        /// The close code the server sent, if it sent one.
        public var code: UInt16?
        /// The close reason the server sent.
        public var reason: String
        /// True when this side asked to stop (`close` or `requestStop`).
        public var byClient: Bool
    }

    let endpoint: WebSocketEndpoint
    let headers: [(name: String, value: String)]
    let subprotocol: String

    private var handler: ((Event) -> Void)?
    private var wsi: OpaquePointer?
    private var outgoing: [[UInt8]] = []
    private var inbound: [UInt8] = []
    private var closeRequest: (code: UInt16, reason: String)?
    private var peerClose: (code: UInt16?, reason: String)?
    private var failure: String?
    private var finished = false
    private let stopRequested = Atomic<Bool>(false)
    private let contextAddress = Mutex<UInt>(0)

    /// A client for `endpoint`; `headers` are added to the upgrade request (e.g. `Authorization`).
    public init(
        endpoint: WebSocketEndpoint, headers: [(name: String, value: String)] = [],
        subprotocol: String = "cairn.v1"
    ) {
        self.endpoint = endpoint
        self.headers = headers
        self.subprotocol = subprotocol
    }

    /// Connects and serves the connection until it ends, calling `handler` on this thread for each event.
    /// Returns how it ended; throws if it could not be established.
    public func run(_ handler: @escaping (Event) -> Void) throws(WebSocketClientError) -> Ending {
        self.handler = handler
        defer { self.handler = nil }
        var keep: [UnsafeMutablePointer<CChar>] = []
        func c(_ s: String) -> UnsafePointer<CChar> {
            let p = strdup(s)!
            keep.append(p)
            return UnsafePointer(p)
        }
        defer { for p in keep { free(p) } }

        let protocols = UnsafeMutablePointer<lws_protocols>.allocate(capacity: 2)
        protocols.initialize(repeating: lws_protocols(), count: 2)
        defer {
            protocols.deinitialize(count: 2)
            protocols.deallocate()
        }
        protocols[0].name = c(subprotocol)
        protocols[0].callback = clientCallback
        protocols[0].rx_buffer_size = 64 * 1024

        var info = lws_context_creation_info()
        info.port = -1  // CONTEXT_PORT_NO_LISTEN: a client-only context
        info.protocols = UnsafePointer(protocols)
        info.gid = -1
        info.uid = -1
        info.options = endpoint.secure ? cairn_lws_opt_do_ssl_global_init() : 0
        info.user = Unmanaged.passUnretained(self).toOpaque()
        cairn_lws_set_logging(0, nil)  // failures are reported through `run`, not printed by lws
        guard let context = lws_create_context(&info) else { throw .contextCreationFailed }
        contextAddress.withLock { $0 = UInt(bitPattern: context) }
        defer {
            contextAddress.withLock { $0 = 0 }
            lws_context_destroy(context)
        }

        var connect = lws_client_connect_info()
        connect.context = context
        connect.address = c(endpoint.host)
        connect.port = Int32(endpoint.port)
        connect.path = c(endpoint.path)
        connect.host = c(
            endpoint.port == (endpoint.secure ? 443 : 80) ? endpoint.host : "\(endpoint.host):\(endpoint.port)")
        connect.origin = connect.host
        connect.protocol = c(subprotocol)
        connect.ssl_connection = endpoint.secure ? Int32(LCCSCF_USE_SSL.rawValue) : 0
        connect.ietf_version_or_minus_one = -1
        var created: OpaquePointer?
        withUnsafeMutablePointer(to: &created) {
            connect.pwsi = $0
            _ = lws_client_connect_via_info(&connect)
        }
        guard created != nil else {
            throw .connectFailed("cannot start connecting to \(endpoint.host):\(endpoint.port)")
        }

        while !finished {
            if lws_service(context, 0) < 0 { break }
        }
        if let failure { throw .connectFailed(failure) }
        return Ending(code: peerClose?.code, reason: peerClose?.reason ?? "", byClient: closeRequest != nil)
    }

    /// Queues a text message (from the handler, on the `run` thread).
    public func send(_ text: String) {
        outgoing.append(Array(text.utf8))
        if let wsi { lws_callback_on_writable(wsi) }
    }

    /// Starts the closing handshake (from the handler, on the `run` thread).
    public func close(code: UInt16 = 1000, reason: String = "") {
        guard closeRequest == nil else { return }
        closeRequest = (code, reason)
        if let wsi { lws_callback_on_writable(wsi) } else { finished = true }
    }

    /// Asks the connection to close normally; safe from any thread.
    public func requestStop() {
        stopRequested.store(true, ordering: .releasing)
        contextAddress.withLock { address in
            if address != 0 { lws_cancel_service(OpaquePointer(bitPattern: address)) }
        }
    }

    // MARK: Callback events (run thread)

    fileprivate func handle(
        _ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ input: UnsafeMutableRawPointer?,
        _ length: Int
    ) -> Int32 {
        switch reason {
        case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
            guard let input else { return 0 }
            let p = input.assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self)
            guard let start = p.pointee else { return 0 }
            let end = start + length
            for (name, value) in headers {
                let field = name.lowercased().hasSuffix(":") ? name : name + ":"
                if lws_add_http_header_by_name(wsi, field, value, Int32(value.utf8.count), p, end) != 0 { return -1 }
            }
            return 0
        case LWS_CALLBACK_CLIENT_ESTABLISHED:
            self.wsi = wsi
            handler?(.opened)
            if !outgoing.isEmpty || closeRequest != nil { lws_callback_on_writable(wsi) }
            return 0
        case LWS_CALLBACK_CLIENT_RECEIVE:
            if let input, length > 0 {
                inbound.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
            }
            if lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0 {
                let text = String(decoding: inbound, as: UTF8.self)
                inbound.removeAll(keepingCapacity: true)
                handler?(.message(text))
            }
            return 0
        case LWS_CALLBACK_CLIENT_WRITEABLE:
            if !outgoing.isEmpty {
                let message = outgoing.removeFirst()
                let pre = Int(cairn_lws_pre())
                var buffer = [UInt8](repeating: 0, count: pre + message.count)
                buffer.replaceSubrange(pre..., with: message)
                let written = buffer.withUnsafeMutableBufferPointer {
                    lws_write(wsi, $0.baseAddress! + pre, message.count, LWS_WRITE_TEXT)
                }
                if written < message.count { return -1 }
                if !outgoing.isEmpty || closeRequest != nil { lws_callback_on_writable(wsi) }
                return 0
            }
            if let request = closeRequest {
                var reason = Array(request.reason.utf8.prefix(120))
                reason.withUnsafeMutableBufferPointer {
                    lws_close_reason(wsi, lws_close_status(rawValue: UInt32(request.code)), $0.baseAddress, $0.count)
                }
                return -1
            }
            return 0
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            if let input, length >= 2 {
                let bytes = UnsafeRawBufferPointer(start: input, count: length)
                let code = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
                peerClose = (code, String(decoding: bytes[2...], as: UTF8.self))
            } else {
                peerClose = (nil, "")
            }
            return 0
        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            let why = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "unknown error"
            failure = why.isEmpty ? "unknown error" : why
            finished = true
            self.wsi = nil
            return 0
        case LWS_CALLBACK_CLIENT_CLOSED:
            finished = true
            self.wsi = nil
            return 0
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            if stopRequested.load(ordering: .acquiring) { close(code: 1000, reason: "client stopping") }
            return 0
        default:
            return 0
        }
    }
}

private let clientCallback:
    @convention(c) (
        OpaquePointer?, lws_callback_reasons, UnsafeMutableRawPointer?,
        UnsafeMutableRawPointer?, Int
    ) -> Int32 = { wsi, reason, _, input, length in
        guard let wsi, let user = lws_context_user(lws_get_context(wsi)) else { return 0 }
        let client = Unmanaged<LwsWebSocketClient>.fromOpaque(user).takeUnretainedValue()
        return client.handle(wsi, reason, input, length)
    }
