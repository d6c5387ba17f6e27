// The transport: one libwebsockets context serving HTTP and WebSocket on one port, run by one dedicated service
// thread that also owns the hub. Everything that touches a `wsi` or the hub happens on that thread; other threads
// reach it only through `LoopJobQueue` (lws_cancel_service). The lws callback (LwsCallback.swift) turns lws events
// into calls on this class; this class turns them into hub calls and hub output into frames.
//
// Event loop: by default lws runs on a libev loop (epoll) that this class owns and turns once per iteration of
// the service loop (lws' own `lws_service` would run a libev loop until it is stopped); `server.event_loop = poll`
// falls back to lws' built-in poll() loop, turned by `lws_service`. Either way each turn ends in the shutdown checks.
//
// Lifecycle: `start()` creates the context on the service thread and returns the bound port; `requestShutdown()`
// (any thread, e.g. a signal handler) lets in-flight work reply, closes every client with 1001 and a reason,
// waits up to the grace period for the closing handshakes, destroys the context on the service thread, and
// signals `waitUntilStopped()`.
import CLws
import CairnDomain
import CairnWire
import Dispatch
import Foundation
import Logging
import Synchronization

/// Errors raised while starting the transport.
public enum ServerStartError: Error, CustomStringConvertible {
    /// libwebsockets could not create the context (typically: the port is in use or the address is invalid).
    case contextCreationFailed(host: String, port: Int)
    /// The same with TLS on: the certificate or key may also have been refused (lws logs which).
    case tlsContextCreationFailed(host: String, port: Int)
    /// libev could not create its loop (`server.event_loop = libev`).
    case eventLoopCreationFailed

    /// A readable explanation.
    public var description: String {
        switch self {
        case .contextCreationFailed(let host, let port):
            "cannot listen on \(host):\(port) (address in use or not available, or, with server.event_loop = "
                + "libev, the libwebsockets libev plugin could not be loaded: see the log line above)"
        case .tlsContextCreationFailed(let host, let port):
            "cannot listen on \(host):\(port) with TLS (address in use or not available, or the certificate or "
                + "key was refused, e.g. a key that does not match the certificate: see the log line above)"
        case .eventLoopCreationFailed:
            "cannot create the libev event loop (server.event_loop = libev); set server.event_loop = poll to use "
                + "libwebsockets' own loop"
        }
    }
}

/// The WebSocket and HTTP server.
public final class WebSocketServer: @unchecked Sendable {
    // Loop-confined state (service thread only) below; `@unchecked Sendable` because the only members touched
    // from other threads are `jobs`, `shutdownRequested` and the start/stop semaphores, which are thread-safe.
    let configuration: ServerConfiguration
    let hub: Hub
    let logger: Logger
    let jobs: LoopJobQueue
    let startedAt = Date()

    var context: OpaquePointer?
    var connections: [ConnectionID: ConnectionState] = [:]
    var pendingTokens: [UInt: String] = [:]
    var pendingHTTP: [UInt: [UInt8]] = [:]
    let mounts: [HTTPMount]
    var httpExchanges: [UInt: HTTPExchange] = [:]
    var nextExchangeSerial: UInt64 = 1
    /// Bytes of request bodies being received or handled, over all exchanges (see `maxBufferedBodyBytes`).
    var bufferedBodyBytes = 0
    /// Requests handed to services whose replies have not come back yet.
    var httpInFlight = 0
    var replyScratch: [UInt8] = []
    var nextConnectionID: ConnectionID = 1
    var draining = false
    var closingAll = false
    var shutdownDeadline: Date?
    var drainDeadline: Date?

    private let shutdownRequested = Atomic<Bool>(false)
    private let started = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    private let startResult = Mutex<Result<Int, ServerStartError>?>(nil)
    private var thread: Thread?

    // C-side memory lws keeps pointers to; freed after lws_context_destroy.
    private var protocols: UnsafeMutablePointer<lws_protocols>?
    private var retryPolicy: UnsafeMutablePointer<lws_retry_bo_t>?
    private var cStrings: [UnsafeMutablePointer<CChar>] = []
    /// The libev loop lws runs on (nil with `server.event_loop = poll`), and the one-entry `foreign_loops` array.
    private var evLoop: UnsafeMutableRawPointer?
    private var foreignLoops: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    var sweepTimer: UnsafeMutableRawPointer?
    /// When the sweep timer is due (monotonic ns), to measure how late it fires.
    var sweepDueAt: UInt64 = 0
    /// Receipt time (monotonic ns) of the message the hub is handling now; 0 outside `received`.
    var currentReceiptAt: UInt64 = 0
    /// Scratch for the receipt times of the positions in one write (reused, so timing allocates nothing).
    var writeReceipts: [UInt64] = []

    /// Renders the body of `GET /metrics` (Prometheus text format); called on the service thread. Without it the
    /// route answers 404. Set before `start()`.
    public var metricsRenderer: (() -> [UInt8])?

    /// Creates a server for `hub`. The hub's scheduler must be `scheduler` of this server (see `makeScheduler`).
    /// `services` are plain-HTTP services mounted on path prefixes (the first matching prefix wins).
    public init(configuration: ServerConfiguration, hub: Hub, scheduler: any LoopScheduler,
                services: [HTTPMount] = [], logger: Logger = Logger(label: "cairn.server")) {
        guard let queue = scheduler as? LoopJobQueue else {
            preconditionFailure("WebSocketServer needs the scheduler made by WebSocketServer.makeScheduler()")
        }
        self.configuration = configuration
        self.hub = hub
        self.jobs = queue
        self.mounts = services
        self.logger = logger
    }

    /// The scheduler to give the hub: jobs run on this server's service thread.
    public static func makeScheduler() -> any LoopScheduler { LoopJobQueue() }

    /// Starts the service thread, waits until it listens, and returns the bound port.
    public func start() throws(ServerStartError) -> Int {
        FileLimit.raise(to: configuration.fileLimit)
        let thread = Thread { [self] in self.serviceThreadMain() }
        thread.name = "cairn-service"
        thread.stackSize = 4 << 20
        self.thread = thread
        thread.start()
        started.wait()
        switch startResult.withLock({ $0 })! {
        case .success(let port): return port
        case .failure(let error): throw error
        }
    }

    /// Asks the server to shut down gracefully; safe from any thread, idempotent.
    public func requestShutdown() {
        if shutdownRequested.exchange(true, ordering: .acquiringAndReleasing) { return }
        jobs.wake()
    }

    /// Blocks until the service thread has destroyed the context and exited.
    public func waitUntilStopped() {
        stopped.wait()
        stopped.signal()  // let further waiters through too
    }

    // MARK: Service thread

    private func serviceThreadMain() {
        LwsLogBridge.install(verbosity: configuration.lwsLogVerbosity)
        if configuration.eventLoop == .libev {
            guard let loop = cairn_ev_loop_new() else {
                startResult.withLock { $0 = .failure(.eventLoopCreationFailed) }
                started.signal()
                stopped.signal()
                return
            }
            evLoop = loop
        }
        guard let context = createContext() else {
            let failure: ServerStartError = configuration.usesTLS
                ? .tlsContextCreationFailed(host: configuration.host, port: configuration.port)
                : .contextCreationFailed(host: configuration.host, port: configuration.port)
            startResult.withLock { $0 = .failure(failure) }
            freeCMemory()
            destroyEventLoop()
            started.signal()
            stopped.signal()
            return
        }
        self.context = context
        jobs.attach(context)
        hub.outbound = self
        let vhost = lws_get_vhost_by_name(context, "cairn")
        let port = vhost.map { Int(lws_get_vhost_listen_port($0)) } ?? configuration.port
        scheduleSweep()
        if let evLoop {
            logger.info("event loop: libev (\(String(cString: cairn_ev_backend_name(evLoop))))")
        } else {
            logger.info("event loop: libwebsockets poll()")
        }
        startResult.withLock { $0 = .success(port) }
        started.signal()

        while true {
            if let evLoop {
                _ = cairn_ev_run_once(evLoop)
            } else if lws_service(context, 0) < 0 {
                break
            }
            if shutdownRequested.load(ordering: .acquiring) && !draining { beginShutdown() }
            if draining && !closingAll && Date() >= drainDeadline! {
                logger.error("work in flight did not finish within \(configuration.shutdownGraceSeconds) s; closing anyway")
                closeAllForShutdown()
            }
            // Leave once every client is gone and the hub's last work (the final snapshot among it) and every HTTP
            // service call have finished, or when the grace period is over.
            if closingAll && ((connections.isEmpty && hub.operationsInFlight == 0 && httpInFlight == 0)
                              || Date() >= shutdownDeadline!) { break }
        }

        hub.outbound = nil
        jobs.attach(nil)
        lws_context_destroy(context)
        self.context = nil
        freeCMemory()
        destroyEventLoop()  // after the context: lws' last closes may still need the loop
        jobs.drainAll()  // completions that arrived after the last service turn: hub discards them (no connections)
        logger.info("transport stopped")
        stopped.signal()
    }

    private func beginShutdown() {
        draining = true
        drainDeadline = Date().addingTimeInterval(TimeInterval(configuration.shutdownGraceSeconds))
        logger.info("shutting down: letting \(hub.operationsInFlight) operation(s) in flight finish")
        hub.beginShutdown { [self] in closeAllForShutdown() }
    }

    private func closeAllForShutdown() {
        guard !closingAll else { return }
        closingAll = true
        shutdownDeadline = Date().addingTimeInterval(TimeInterval(configuration.shutdownGraceSeconds))
        for state in connections.values {
            close(state, code: CloseCode.goingAway.rawValue, reason: "server shutting down")
        }
        logger.info("closing \(connections.count) connection(s) with 1001")
    }

    private func createContext() -> OpaquePointer? {
        let protocols = UnsafeMutablePointer<lws_protocols>.allocate(capacity: 2)
        protocols.initialize(repeating: lws_protocols(), count: 2)
        protocols[0].name = UnsafePointer(keep(strdup("cairn.v1")))
        protocols[0].callback = cairnLwsCallback
        protocols[0].per_session_data_size = MemoryLayout<UInt64>.size
        protocols[0].rx_buffer_size = 16 * 1024
        self.protocols = protocols

        let retry = UnsafeMutablePointer<lws_retry_bo_t>.allocate(capacity: 1)
        retry.initialize(to: lws_retry_bo_t())
        retry.pointee.secs_since_valid_ping = UInt16(clamping: configuration.pingIntervalSeconds)
        retry.pointee.secs_since_valid_hangup = UInt16(clamping: configuration.idleTimeoutSeconds)
        self.retryPolicy = retry

        var info = lws_context_creation_info()
        info.port = Int32(configuration.port)
        info.iface = UnsafePointer(keep(strdup(configuration.host)))
        info.vhost_name = UnsafePointer(keep(strdup("cairn")))
        info.protocols = UnsafePointer(protocols)
        info.retry_and_idle_policy = UnsafePointer(retry)
        info.gid = -1
        info.uid = -1
        info.options = cairn_lws_opt_disable_ipv6()
        if configuration.usesTLS, let certificate = configuration.tlsCertificatePath,
           let key = configuration.tlsPrivateKeyPath {
            // TLS on the same port: lws loads the PEM files when it creates the vhost. ALPN offers only
            // http/1.1, because lws 4.1 would otherwise negotiate h2 and carry WebSockets as HTTP/2 streams;
            // one TCP connection per client keeps backpressure and close codes per socket.
            info.options |= cairn_lws_opt_do_ssl_global_init()
            info.ssl_cert_filepath = UnsafePointer(keep(strdup(certificate)))
            info.ssl_private_key_filepath = UnsafePointer(keep(strdup(key)))
            info.alpn = UnsafePointer(keep(strdup("http/1.1")))
        }
        info.user = Unmanaged.passUnretained(self).toOpaque()
        if let evLoop {
            let slot = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 1)
            slot.initialize(to: nil)
            foreignLoops = slot
            cairn_lws_info_use_libev(&info, slot, evLoop)
        }
        return lws_create_context(&info)
    }

    private func keep(_ p: UnsafeMutablePointer<CChar>?) -> UnsafeMutablePointer<CChar> {
        cStrings.append(p!)
        return p!
    }

    private func freeCMemory() {
        for p in cStrings { free(p) }
        cStrings.removeAll()
        protocols?.deinitialize(count: 2)
        protocols?.deallocate()
        protocols = nil
        retryPolicy?.deallocate()
        retryPolicy = nil
        sweepTimer?.deallocate()
        sweepTimer = nil
        foreignLoops?.deallocate()
        foreignLoops = nil
    }

    private func destroyEventLoop() {
        guard let evLoop else { return }
        cairn_ev_loop_destroy(evLoop)
        self.evLoop = nil
    }

    // MARK: Periodic sweep (one timer for everything, as lws timers are a linearly sorted list)

    private func scheduleSweep() {
        if sweepTimer == nil {
            let size = MemoryLayout<lws_sorted_usec_list_t>.stride + MemoryLayout<UnsafeMutableRawPointer>.size
            let raw = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
            raw.initializeMemory(as: UInt8.self, repeating: 0, count: size)
            (raw + MemoryLayout<lws_sorted_usec_list_t>.stride)
                .storeBytes(of: Unmanaged.passUnretained(self).toOpaque(), as: UnsafeMutableRawPointer.self)
            sweepTimer = raw
        }
        let sul = sweepTimer!.assumingMemoryBound(to: lws_sorted_usec_list_t.self)
        sweepDueAt = MonotonicTime.now() + 1_000_000_000
        lws_sul_schedule(context, 0, sul, { sul in
            guard let sul else { return }
            let raw = UnsafeMutableRawPointer(sul) + MemoryLayout<lws_sorted_usec_list_t>.stride
            let server = Unmanaged<WebSocketServer>.fromOpaque(raw.load(as: UnsafeMutableRawPointer.self))
                .takeUnretainedValue()
            server.sweep()
        }, 1_000_000)
    }

    private func sweep() {
        hub.telemetry.recordLoopLag(nanoseconds: MonotonicTime.elapsed(from: sweepDueAt, to: MonotonicTime.now()))
        hub.tick()
        hub.publishStats { transportGauges() }
        scheduleSweep()
    }

    // MARK: Connection events (called from the lws callback, service thread)

    func opened(wsi: OpaquePointer, session: UnsafeMutableRawPointer) {
        let id = nextConnectionID
        nextConnectionID += 1
        session.storeBytes(of: id, as: UInt64.self)
        let state = ConnectionState(id: id, wsi: wsi)
        connections[id] = state
        hub.telemetry.connectionsOpened &+= 1
        let token = pendingTokens.removeValue(forKey: UInt(bitPattern: wsi))
        if draining {
            close(state, code: CloseCode.goingAway.rawValue, reason: "server shutting down")
            return
        }
        hub.connectionOpened(id, token: token)
    }

    func connection(for session: UnsafeMutableRawPointer?) -> ConnectionState? {
        guard let session else { return nil }
        let id = session.load(as: UInt64.self)
        return id == 0 ? nil : connections[id]
    }

    /// Handles one chunk of an inbound message.
    func received(_ state: ConnectionState, bytes: UnsafeRawBufferPointer) {
        let wsi = state.wsi
        // After an oversized message, or once closing, the rest of what the client sends is read and dropped:
        // dropping the socket with unread input would make the kernel reset it, and the client could lose the
        // close frame (and its code) in the reset.
        if state.closing { return }
        if lws_is_first_fragment(wsi) != 0 && state.inbound.isEmpty {
            state.inboundIsBinary = lws_frame_is_binary(wsi) != 0
        }
        let remaining = Int(lws_remaining_packet_payload(wsi))
        if state.inbound.count + bytes.count + remaining > configuration.maxMessageBytes {
            state.resetInbound()
            close(state, code: CloseCode.messageTooBig.rawValue,
                  reason: "message exceeds \(configuration.maxMessageBytes) bytes")
            return
        }
        state.inbound.append(contentsOf: bytes)
        guard lws_is_final_fragment(wsi) != 0 && remaining == 0 else { return }
        if draining {
            state.resetInbound()
            return
        }
        let telemetry = hub.telemetry
        telemetry.messagesReceived &+= 1
        telemetry.bytesReceived &+= UInt64(state.inbound.count)
        if state.inboundIsBinary {
            hub.receivedBinary(state.id)
        } else {
            currentReceiptAt = MonotonicTime.now()
            state.inbound.withUnsafeBytes { hub.received(state.id, frame: $0) }
            currentReceiptAt = 0
        }
        state.resetInbound()
    }

    /// Writes everything pending as one frame, or performs a pending close. Returns false to close.
    func writable(_ state: ConnectionState) -> Bool {
        state.collectLatest(receivedAt: &writeReceipts)
        if state.hasOutbound {
            let length = state.outbound.count - ConnectionState.pre
            let written = state.outbound.withUnsafeMutableBytes { buffer in
                lws_write(state.wsi, buffer.baseAddress!.assumingMemoryBound(to: UInt8.self) + ConnectionState.pre,
                          length, LWS_WRITE_TEXT)
            }
            state.resetOutbound()
            recordWrite(bytes: length)
            if written < length { return false }
            if state.pendingClose != nil { lws_callback_on_writable(state.wsi) }
            return true
        }
        if let close = state.pendingClose {
            setCloseReason(state.wsi, code: close.code, reason: close.reason)
            return false
        }
        return true
    }

    func closed(_ session: UnsafeMutableRawPointer?) {
        guard let session else { return }
        let id = session.load(as: UInt64.self)
        guard id != 0, connections.removeValue(forKey: id) != nil else { return }
        session.storeBytes(of: 0, as: UInt64.self)
        hub.connectionClosed(id)
    }

    func close(_ state: ConnectionState, code: UInt16, reason: String) {
        guard !state.closing else { return }
        state.closing = true
        state.pendingClose = (code, reason)
        lws_callback_on_writable(state.wsi)
        // The close frame goes out from a writable callback; a client that stopped reading never gives one, so
        // lws drops the connection after a few seconds regardless.
        lws_set_timeout(state.wsi, pending_timeout(rawValue: PENDING_TIMEOUT_USER_REASON_BASE.rawValue + 1), 5)
    }

    func setCloseReason(_ wsi: OpaquePointer, code: UInt16, reason: String) {
        var bytes = Array(reason.utf8.prefix(120))
        bytes.withUnsafeMutableBufferPointer { b in
            lws_close_reason(wsi, lws_close_status(rawValue: UInt32(code)), b.baseAddress, b.count)
        }
    }

    /// Counts one written frame and times the positions it carried (receipt to hand-over to lws_write).
    private func recordWrite(bytes: Int) {
        let telemetry = hub.telemetry
        telemetry.messagesSent &+= 1
        telemetry.bytesSent &+= UInt64(bytes)
        guard !writeReceipts.isEmpty else { return }
        let now = MonotonicTime.now()
        for receivedAt in writeReceipts {
            telemetry.recordFanoutLatency(nanoseconds: MonotonicTime.elapsed(from: receivedAt, to: now))
        }
        writeReceipts.removeAll(keepingCapacity: true)
    }

    // MARK: Counters for /healthz, the stats channel and /metrics

    /// What only the transport knows, for a stats reading (service thread only; walks every connection).
    public func transportGauges() -> TransportGauges {
        var coalesced = 0, pending = 0
        for state in connections.values {
            coalesced += state.latest.count
            pending += state.pendingBytes
        }
        return TransportGauges(pendingCoalesced: coalesced, pendingOutboundBytes: pending,
                               residentBytes: ResidentMemory.bytes(), uptimeSeconds: uptimeSeconds)
    }

    var uptimeSeconds: Double { Date().timeIntervalSince(startedAt) }

    /// Bytes waiting to be written, over all connections (service thread only).
    var pendingOutboundBytes: Int { connections.values.reduce(0) { $0 + $1.pendingBytes } }
}

extension WebSocketServer: Outbound {
    /// Queues one JSON object for a connection and asks lws for a writable callback.
    public func send(_ connection: ConnectionID, _ json: UnsafeRawBufferPointer) {
        guard let state = connections[connection], !state.closing else { return }
        if state.outbound.count + json.count + 1 - ConnectionState.pre > configuration.maxOutboundBytes {
            state.resetOutbound()
            close(state, code: CloseCode.outboundOverflow.rawValue, reason: "client is not reading fast enough")
            return
        }
        state.append(json)
        lws_callback_on_writable(state.wsi)
    }

    /// Replaces whatever is pending for the connection under `key`; the slot is bounded by the number of keys.
    public func sendLatest(_ connection: ConnectionID, key: Int64, _ json: [UInt8]) {
        guard let state = connections[connection], !state.closing else { return }
        // The receipt of the frame being handled; a position sent from elsewhere (a job) is timed from now.
        state.latest[key] = LatestSlot(bytes: json, receivedAt: currentReceiptAt != 0 ? currentReceiptAt : MonotonicTime.now())
        lws_callback_on_writable(state.wsi)
    }

    /// Drops what is pending under `key`.
    public func dropLatest(_ connection: ConnectionID, key: Int64) {
        connections[connection]?.latest[key] = nil
    }

    /// Closes a connection after what is already queued for it has been written.
    public func close(_ connection: ConnectionID, code: UInt16, reason: String) {
        guard let state = connections[connection] else { return }
        close(state, code: code, reason: reason)
    }
}
