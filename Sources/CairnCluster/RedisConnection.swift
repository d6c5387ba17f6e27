// One hiredis async connection on the hub's libev loop, and its own reconnection. Every callback (connected,
// disconnected, a reply, a pub/sub message) arrives on the loop thread through the libev adapter, so this type keeps
// plain properties and no locks. hiredis frees a context itself after a failed connect or a disconnect; the
// callbacks clear `context` before that happens, and `stop()` frees a live one. A reply's completion is found by a
// serial passed as hiredis's privdata (never a pointer to Swift memory), so a late callback can only miss.
import CHiredis
import CairnLoop

/// One async connection to Redis that reconnects by itself until stopped.
final class RedisConnection {
    /// What the connection is for (it names it in logs and errors).
    let name: String
    private let endpoint: RedisEndpoint
    private let loop: UnsafeMutableRawPointer
    private let random: () -> Double
    private var backoff: ReconnectBackoff
    private var retry: LoopTimer?
    private var context: UnsafeMutablePointer<redisAsyncContext>?
    private var pending: [UInt: (Result<RedisValue, RedisError>) -> Void] = [:]
    private var serial: UInt = 0
    private var stopped = true

    /// True between the connect callback's success and the next disconnect.
    private(set) var isUp = false
    /// The last connection error, for the log.
    private(set) var lastError: String?
    /// Called on the loop when the connection is established (first time and after each reconnect).
    var onUp: (() -> Void)?
    /// Called on the loop when an established connection is lost.
    var onDown: (() -> Void)?
    /// Pub/sub messages (channel, payload) on a connection that subscribed.
    var onMessage: ((String, [UInt8]) -> Void)?
    /// Redis confirmed a SUBSCRIBE to this channel: messages published from now on reach `onMessage`.
    var onSubscribed: ((String) -> Void)?

    init(
        name: String, endpoint: RedisEndpoint, loop: UnsafeMutableRawPointer, backoff: ReconnectBackoff,
        random: @escaping () -> Double
    ) {
        self.name = name
        self.endpoint = endpoint
        self.loop = loop
        self.backoff = backoff
        self.random = random
    }

    /// Connects (asynchronously) and keeps reconnecting until `stop`.
    func start() {
        guard stopped else { return }
        stopped = false
        if retry == nil { retry = LoopTimer(loop: loop) { [unowned self] in self.connect() } }
        connect()
    }

    /// Closes the connection; pending commands fail with `.disconnected`; no reconnect. With `flush`, what is
    /// queued is written first (briefly blocking: for shutdown, when the loop will not turn again).
    func stop(flush: Bool = false) {
        stopped = true
        retry?.stop()
        let wasUp = isUp
        isUp = false  // no onDown for a stop that was asked for
        if let context {
            if flush && wasUp { _ = cairn_redis_flush(context, 200) }
            self.context = nil
            redisAsyncFree(context)  // calls pending completions with no reply, then the disconnect callback
        }
        failPending()
    }

    /// Drops an established connection that stopped answering (a half-open TCP connection never reports its loss):
    /// pending commands fail with `.disconnected`, `onDown` runs and the usual back-off reconnects. A connection
    /// still connecting (the link drops both when one is lost) is abandoned and tried again after the back-off.
    func drop(because reason: String) {
        guard let context, !stopped else { return }
        lastError = reason
        guard isUp else {
            // Still connecting: hiredis calls the disconnect callback only for a connected context, so nothing else
            // would clear `context` (a later free would be a double free) or schedule the reconnect.
            self.context = nil
            redisAsyncFree(context)
            return scheduleRetry()
        }
        redisAsyncFree(context)  // the disconnect callback clears `context` and schedules the reconnect
    }

    /// Sends a command (its arguments as bytes, binary-safe); `done` (optional) gets its reply or failure.
    func send(_ arguments: [[UInt8]], _ done: ((Result<RedisValue, RedisError>) -> Void)?) {
        guard let context, isUp else {
            done?(.failure(.unavailable))
            return
        }
        serial &+= 1
        if serial == 0 { serial = 1 }  // privdata 0 would read as "no callback data"
        let id = serial
        if let done { pending[id] = done }
        let status = Self.withArgv(arguments) { argc, argv, lengths in
            redisAsyncCommandArgv(
                context, done == nil ? nil : redisReplied, UnsafeMutableRawPointer(bitPattern: id), argc, argv, lengths
            )
        }
        if status != REDIS_OK {
            pending[id] = nil
            done?(.failure(.rejected(String(cString: cairn_redis_errstr(context)))))
        }
    }

    /// Subscribes to `channels` on this connection; messages arrive through `onMessage`. True when the command
    /// went out (Redis will confirm each channel); false while the connection is down or for no channels.
    @discardableResult
    func subscribe(_ channels: [String]) -> Bool { pubsub("SUBSCRIBE", channels) }

    /// Unsubscribes from `channels`.
    func unsubscribe(_ channels: [String]) { pubsub("UNSUBSCRIBE", channels) }

    @discardableResult
    private func pubsub(_ command: String, _ channels: [String]) -> Bool {
        guard let context, isUp, !channels.isEmpty else { return false }
        let arguments = [Array(command.utf8)] + channels.map { Array($0.utf8) }
        let status = Self.withArgv(arguments) { argc, argv, lengths in
            redisAsyncCommandArgv(
                context, redisPubSubReplied, Unmanaged.passUnretained(self).toOpaque(), argc, argv, lengths)
        }
        return status == REDIS_OK
    }

    // MARK: Connecting

    private func connect() {
        guard !stopped, context == nil else { return }
        guard let context = redisAsyncConnect(endpoint.host, Int32(endpoint.port)) else {
            return failed("out of memory")
        }
        if cairn_redis_err(context) != 0 {
            let message = String(cString: cairn_redis_errstr(context))
            redisAsyncFree(context)
            return failed(message)
        }
        context.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        guard cairn_redis_attach_libev(loop, context) == REDIS_OK else {
            redisAsyncFree(context)
            return failed("could not attach to the event loop")
        }
        redisAsyncSetConnectCallback(context, redisConnected)
        redisAsyncSetDisconnectCallback(context, redisDisconnected)
        self.context = context
    }

    private func failed(_ message: String) {
        lastError = message
        scheduleRetry()
    }

    private func scheduleRetry() {
        guard !stopped else { return }
        retry?.start(after: backoff.next(random: random()))
    }

    fileprivate func connected(_ status: Int32, _ message: String) {
        guard status == REDIS_OK else {
            context = nil  // hiredis frees it after this callback
            return failed(message)
        }
        isUp = true
        lastError = nil
        backoff.reset()
        onUp?()
    }

    fileprivate func disconnected(_ status: Int32, _ message: String) {
        context = nil  // hiredis frees it after this callback
        let wasUp = isUp
        isUp = false
        failPending()
        if status != REDIS_OK { lastError = message.isEmpty ? "connection lost" : message }
        if wasUp { onDown?() }
        scheduleRetry()
    }

    fileprivate func replied(_ id: UInt, _ reply: UnsafeMutableRawPointer?) {
        guard let done = pending.removeValue(forKey: id) else { return }
        guard let reply else { return done(.failure(.disconnected)) }
        done(RedisValue.copy(reply.assumingMemoryBound(to: redisReply.self)))
    }

    fileprivate func pubsubReplied(_ reply: UnsafeMutableRawPointer?) {
        guard let reply,
            case .success(.array(let parts)) = RedisValue.copy(reply.assumingMemoryBound(to: redisReply.self)),
            parts.count == 3, let channel = parts[1].text
        else { return }
        switch parts[0].text {
        case "message":
            guard case .bytes(let payload) = parts[2] else { return }
            onMessage?(channel, payload)
        case "subscribe":
            onSubscribed?(channel)
        default:
            return
        }
    }

    private func failPending() {
        let failing = pending
        pending.removeAll()
        for (_, done) in failing.sorted(by: { $0.key < $1.key }) { done(.failure(.disconnected)) }
    }

    /// Calls `body` with argc, argv and argvlen for hiredis; the copies live until it returns (hiredis copies the
    /// formatted command into its own buffer before returning).
    private static func withArgv(
        _ arguments: [[UInt8]],
        _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> Int32
    ) -> Int32 {
        let storage = arguments.map { argument -> UnsafeMutablePointer<CChar> in
            let p = UnsafeMutablePointer<CChar>.allocate(capacity: max(argument.count, 1))
            argument.withUnsafeBytes { raw in
                UnsafeMutableRawPointer(p).copyMemory(
                    from: raw.baseAddress ?? UnsafeRawPointer(p), byteCount: raw.count)
            }
            return p
        }
        defer { for pointer in storage { pointer.deallocate() } }
        var argv = storage.map { UnsafePointer<CChar>?(UnsafePointer($0)) }
        let lengths = arguments.map(\.count)
        return argv.withUnsafeMutableBufferPointer { argvBuffer in
            lengths.withUnsafeBufferPointer { lengthBuffer in
                body(Int32(arguments.count), argvBuffer.baseAddress!, lengthBuffer.baseAddress!)
            }
        }
    }
}

// C callbacks: each finds its connection through the context's `data` or the privdata, on the loop thread.

private func owner(_ context: UnsafePointer<redisAsyncContext>?) -> RedisConnection? {
    guard let data = context?.pointee.data else { return nil }
    return Unmanaged<RedisConnection>.fromOpaque(data).takeUnretainedValue()
}

private func redisConnected(_ context: UnsafePointer<redisAsyncContext>?, _ status: Int32) {
    let message = context.map { String(cString: cairn_redis_errstr($0)) } ?? ""
    owner(context)?.connected(status, message)
}

private func redisDisconnected(_ context: UnsafePointer<redisAsyncContext>?, _ status: Int32) {
    let message = context.map { String(cString: cairn_redis_errstr($0)) } ?? ""
    owner(context)?.disconnected(status, message)
}

private func redisReplied(
    _ context: UnsafeMutablePointer<redisAsyncContext>?, _ reply: UnsafeMutableRawPointer?,
    _ privdata: UnsafeMutableRawPointer?
) {
    guard let privdata else { return }
    owner(UnsafePointer(context))?.replied(UInt(bitPattern: privdata), reply)
}

private func redisPubSubReplied(
    _ context: UnsafeMutablePointer<redisAsyncContext>?, _ reply: UnsafeMutableRawPointer?,
    _ privdata: UnsafeMutableRawPointer?
) {
    owner(UnsafePointer(context))?.pubsubReplied(reply)
}
