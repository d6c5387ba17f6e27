// The transport: one libwebsockets context serving HTTP and WebSocket on one port, run by one dedicated service
// thread. This type owns what both sides share: the context, the service thread and its loop, the one-second sweep
// timer, and shutdown. The WebSocket side (WebSocketEndpoint) and the HTTP side (HTTPEndpoint) each own their own
// state; the lws callback (LwsCallback.swift) hands each event to one of them. Everything that touches a `wsi`
// happens on the service thread, which claims the loop's `LoopConfinement` while it serves; other threads reach
// it only through the `ServiceLoop`'s job queue (lws_cancel_service). What the transport serves is a
// `ConnectionHandler`; what it measures goes to a `TransportObserver`. It knows neither's implementation.
//
// Event loop: by default lws runs on a libev loop (epoll) that this class owns and turns once per iteration of
// the service loop (lws' own `lws_service` would run a libev loop until it is stopped); `server.event_loop = poll`
// falls back to lws' built-in poll() loop, turned by `lws_service`. Either way each turn ends by writing what the
// turn queued for each WebSocket connection (`WebSocketEndpoint.flush`), then the shutdown checks.
//
// Lifecycle: `start()` creates the context on the service thread and returns the bound port; `requestShutdown()`
// (any thread, e.g. a signal handler) lets in-flight work reply, closes every client with 1001 and a reason,
// waits up to the grace period for the closing handshakes, destroys the context on the service thread, and
// signals `waitUntilStopped()`.
import CLws
public import CairnLoop
import CairnWire
import Dispatch
import Foundation
public import Logging
import Synchronization

/// The WebSocket and HTTP server: the context, the service thread, the sweep timer and shutdown.
public final class TransportServer: @unchecked Sendable {
    // Loop-confined state (service thread only) below; `@unchecked Sendable` because the only members touched
    // from other threads are `jobs`, `shutdownRequested` and the start/stop semaphores, which are thread-safe.
    let configuration: ServerConfiguration
    let handler: any ConnectionHandler
    let observer: any TransportObserver
    let logger: Logger
    let jobs: LoopJobQueue
    /// The thread that owns live state: the service thread claims it before serving and releases it after.
    /// Hand the same object to whatever the server drives, so it can assert its own entry points.
    public let confinement: LoopConfinement
    let startedAt: Date
    /// The WebSocket side: connections, frames, latest-wins slots; the handler's `Outbound`.
    let webSockets: WebSocketEndpoint
    /// The HTTP side: routes, mounted services, body budgets, exchanges and replies.
    let http: HTTPEndpoint
    /// Bytes and positions waiting to be written, over all connections, read at most once a second.
    let pending: PendingTotals

    var context: OpaquePointer?
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
    /// Gives the free memory a burst of connections leaves back to the kernel once the burst has settled.
    private let heapTrim = HeapTrim()
    /// When the sweep timer is due (monotonic ns), to measure how late it fires.
    var sweepDueAt: UInt64 = 0

    /// Renders the body of `GET /metrics` (Prometheus text format); called on the service thread. Without it the
    /// route answers 404. Set before `start()`.
    public var metricsRenderer: (() -> [UInt8])? {
        get { http.metricsRenderer }
        set { http.metricsRenderer = newValue }
    }

    /// Called on the service thread with the libev loop (an opaque `struct ev_loop *`) once the context exists and
    /// before the first turn, so other clients (Redis) can run on the same loop; not called with
    /// `server.event_loop = poll`. Set before `start()`.
    public var loopStarted: ((UnsafeMutableRawPointer) -> Void)?
    /// Called on the service thread after the last turn and after the context is destroyed (every connection's
    /// close has been handled), before the loop is destroyed: whatever `loopStarted` attached must be stopped here.
    public var loopStopping: (() -> Void)?

    /// Creates a server that runs `loop` and drives `handler`, which must have been built with `loop.scheduler`
    /// (its results come back on this server's service thread). Measurements go to `observer`. `services` are
    /// plain-HTTP services mounted on path prefixes (the first matching prefix wins).
    public init(
        configuration: ServerConfiguration, loop: ServiceLoop, handler: any ConnectionHandler,
        observer: any TransportObserver, services: [HTTPMount] = [],
        logger: Logger = Logger(label: "cairn.server")
    ) {
        self.configuration = configuration
        self.handler = handler
        self.observer = observer
        self.jobs = loop.jobs
        self.confinement = loop.confinement
        self.logger = logger
        let startedAt = Date()
        let webSockets = WebSocketEndpoint(
            configuration: configuration, handler: handler, observer: observer,
            confinement: loop.confinement, logger: logger)
        self.startedAt = startedAt
        self.webSockets = webSockets
        let pending = PendingTotals(webSockets)
        self.pending = pending
        http = HTTPEndpoint(configuration: configuration, mounts: services, jobs: loop.jobs) {
            HealthFigures(
                handler: handler.health, pendingOutboundBytes: pending.now().bytes,
                uptimeSeconds: Date().timeIntervalSince(startedAt))
        }
    }

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
        // From here until the context is gone, live state belongs to this thread; entry points assert it.
        confinement.claim()
        LwsLogBridge.install(verbosity: configuration.lwsLogVerbosity)
        if configuration.eventLoop == .libev {
            guard let loop = cairn_ev_loop_new() else {
                startResult.withLock { $0 = .failure(.eventLoopCreationFailed) }
                confinement.release()
                started.signal()
                stopped.signal()
                return
            }
            evLoop = loop
        }
        guard let context = createContext() else {
            let failure: ServerStartError =
                configuration.usesTLS
                ? .tlsContextCreationFailed(host: configuration.host, port: configuration.port)
                : .contextCreationFailed(host: configuration.host, port: configuration.port)
            startResult.withLock { $0 = .failure(failure) }
            freeCMemory()
            destroyEventLoop()
            confinement.release()
            started.signal()
            stopped.signal()
            return
        }
        self.context = context
        webSockets.context = context
        jobs.attach(context)
        handler.outbound = webSockets
        let vhost = lws_get_vhost_by_name(context, "cairn")
        let port = vhost.map { Int(lws_get_vhost_listen_port($0)) } ?? configuration.port
        scheduleSweep()
        if let evLoop {
            logger.info("event loop: libev (\(String(cString: cairn_ev_backend_name(evLoop))))")
            loopStarted?(evLoop)
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
            // The end of the turn: what it queued for each connection goes out now, one frame per connection.
            webSockets.flush()
            if shutdownRequested.load(ordering: .acquiring) && !draining { beginShutdown() }
            if draining && !closingAll && Date() >= drainDeadline! {
                logger.error(
                    "work in flight did not finish within \(configuration.shutdownGraceSeconds) s; closing anyway")
                closeAllForShutdown()
            }
            // Leave once every client is gone and the handler's last work (the final snapshot among it) and every
            // HTTP service call have finished, or when the grace period is over.
            if closingAll
                && ((webSockets.isEmpty && handler.operationsInFlight == 0 && http.inFlight == 0)
                    || Date() >= shutdownDeadline!)
            {
                break
            }
        }

        handler.outbound = nil
        jobs.attach(nil)
        webSockets.context = nil  // the closes lws reports while destroying must not wake a context going away
        lws_context_destroy(context)
        self.context = nil
        if evLoop != nil { loopStopping?() }  // after the last close callbacks, before the loop goes
        freeCMemory()
        destroyEventLoop()  // after the context: lws' last closes may still need the loop
        // Completions that arrived after the last service turn: the handler discards them (no connections).
        jobs.drainAll()
        confinement.release()
        logger.info("transport stopped")
        stopped.signal()
    }

    private func beginShutdown() {
        draining = true
        webSockets.draining = true
        http.draining = true
        drainDeadline = Date().addingTimeInterval(TimeInterval(configuration.shutdownGraceSeconds))
        logger.info("shutting down: letting \(handler.operationsInFlight) operation(s) in flight finish")
        handler.beginShutdown { [self] in closeAllForShutdown() }
    }

    private func closeAllForShutdown() {
        guard !closingAll else { return }
        closingAll = true
        shutdownDeadline = Date().addingTimeInterval(TimeInterval(configuration.shutdownGraceSeconds))
        webSockets.closeAll(code: CloseCode.goingAway.rawValue, reason: "server shutting down")
        logger.info("closing \(webSockets.count) connection(s) with 1001")
    }

    private func createContext() -> OpaquePointer? {
        let protocols = UnsafeMutablePointer<lws_protocols>.allocate(capacity: 2)
        protocols.initialize(repeating: lws_protocols(), count: 2)
        protocols[0].name = UnsafePointer(keep(strdup("cairn.v1")))
        protocols[0].callback = cairnLwsCallback
        protocols[0].per_session_data_size = MemoryLayout<UInt64>.size
        // lws allocates `rx_buffer_size` bytes per connection for the frame being parsed, and the first and last
        // pages of that buffer stay resident: 16 KiB cost about 4 KiB of RSS per idle connection. A larger message
        // arrives in several chunks, which WebSocketEndpoint assembles within the size cap anyway. lws 4.1 also
        // caps each send at `tx_packet_size` (or, when that is 0, `rx_buffer_size`): keep sends at 16 KiB.
        protocols[0].rx_buffer_size = Self.receiveChunkBytes
        protocols[0].tx_packet_size = 16 * 1024
        self.protocols = protocols

        // lws' keepalive is off (no validity timers: a zero hangup turns them off); the endpoint pings and drops
        // silent connections itself, once a second (`WebSocketEndpoint.keepAlive`).
        let retry = UnsafeMutablePointer<lws_retry_bo_t>.allocate(capacity: 1)
        retry.initialize(to: lws_retry_bo_t())
        retry.pointee.secs_since_valid_ping = 0
        retry.pointee.secs_since_valid_hangup = 0
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
            let key = configuration.tlsPrivateKeyPath
        {
            // TLS on the same port: lws loads the PEM files when it creates the vhost. ALPN offers only
            // http/1.1, because lws 4.1 would otherwise negotiate h2 and carry WebSockets as HTTP/2 streams;
            // one TCP connection per client keeps backpressure and close codes per socket.
            info.options |= cairn_lws_opt_do_ssl_global_init()
            info.ssl_cert_filepath = UnsafePointer(keep(strdup(certificate)))
            info.ssl_private_key_filepath = UnsafePointer(keep(strdup(key)))
            info.alpn = UnsafePointer(keep(strdup("http/1.1")))
            // TLS 1.2 at least (1.0 and 1.1 are refused even where the library would still allow them), and for
            // TLS 1.2 only the configured suites (by default forward-secret AEAD ones); TLS 1.3 suites are all modern.
            info.ssl_options_set = cairn_lws_tls_refuse_older_than(configuration.tlsMinimumVersion == .tls13 ? 1 : 0)
            info.ssl_cipher_list = UnsafePointer(keep(strdup(configuration.tlsCiphers)))
        }
        info.user = Unmanaged.passUnretained(self).toOpaque()
        if let evLoop {
            let slot = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 1)
            slot.initialize(to: nil)
            foreignLoops = slot
            cairn_lws_info_use_libev(&info, slot, evLoop)
        }
        _ = HeaderTableArena.forLws
        return lws_create_context(&info)
    }

    /// Bytes lws parses a WebSocket frame into before it hands them over (per connection, plus `LWS_PRE` and 4; see
    /// `createContext`): a position report fits whole; larger messages arrive in chunks, one socket read each
    /// (docs/BENCHMARKS.md, "Memory per connection").
    static let receiveChunkBytes = 256

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
        lws_sul_schedule(
            context, 0, sul,
            { sul in
                guard let sul else { return }
                let raw = UnsafeMutableRawPointer(sul) + MemoryLayout<lws_sorted_usec_list_t>.stride
                let server = Unmanaged<TransportServer>.fromOpaque(raw.load(as: UnsafeMutableRawPointer.self))
                    .takeUnretainedValue()
                server.sweep()
            }, 1_000_000)
    }

    private func sweep() {
        confinement.assertOnLoop()
        let now = MonotonicTime.now()
        observer.loopLag(nanoseconds: MonotonicTime.elapsed(from: sweepDueAt, to: now))
        http.expireSlowBodies(now: now)
        webSockets.keepAlive()
        handler.tick()
        HeaderTableArena.forLws?.releaseExcess()
        heapTrim.second(changes: webSockets.changes) { [logger] returned, milliseconds in
            logger.info(
                "after a burst of connections: \(returned / 1024) KiB given back to the kernel in \(milliseconds) ms")
        }
        // What the tick sent (expired rules, relic expiry, alerts) goes out now: with the poll() loop, lws' timers
        // run before its wait, so the end-of-turn flush would come only after the next wake-up.
        webSockets.flush()
        scheduleSweep()
    }

    // MARK: Gauges for the stats channel and /metrics

    /// What only the transport knows, for a stats reading. Service thread only. The walk over every connection it
    /// needs is taken at most once a second (`PendingTotals`).
    public func transportGauges() -> ServerGauges {
        confinement.assertOnLoop()
        let pending = self.pending.now()
        return ServerGauges(
            pendingCoalesced: pending.coalesced, pendingOutboundBytes: pending.bytes,
            residentBytes: ResidentMemory.bytes(), uptimeSeconds: Date().timeIntervalSince(startedAt))
    }
}
