// The client an app holds: an actor that drives the I/O-free ConnectionCore, carrying out its effects (sockets of the
// transport, timers, resuming callers, publishing events and states). The typed ops live in the CairnClient+*.swift
// files, each family in its own; they all go through `request`, `watch` and `report` here.
import Foundation

/// A connection to a Cairn hub that outlives the socket under it.
///
/// ```swift
/// let client = CairnClient(url: URL(string: "ws://127.0.0.1:7681/ws")!)
/// try await client.connect()
/// let session = try await client.login(username: "alice", password: "correct horse")
/// let friends = try await client.watchFriends()
/// for await event in client.events {
///     if case .position(let p) = event { print(p.user, p.latitude, p.longitude) }
/// }
/// ```
///
/// After a lost connection the client reconnects with back-off and jitter as the close code allows, signs in again
/// with its token, sends its watches again, then reports ``ConnectionState/connected``, sends the latest position
/// reported while offline and lets waiting requests go. ``close()`` ends it for good.
public actor CairnClient {
    /// The subprotocol the hub speaks.
    public static let subprotocol = "cairn.v1"

    /// The hub's WebSocket endpoint, e.g. `ws://127.0.0.1:7681/ws`.
    public nonisolated let url: URL
    /// The hub's HTTP base (for media), e.g. `http://127.0.0.1:7681`.
    public nonisolated let httpURL: URL
    /// The configuration the client was made with.
    public nonisolated let configuration: Configuration

    var core: ConnectionCore
    private var sockets: [Int: any CairnSocket] = [:]
    private var timers: [ConnectionCore.Timer: (serial: UInt64, task: Task<Void, Never>)] = [:]
    private var timerSerial: UInt64 = 0
    private var waiters: [ConnectionCore.Key: CheckedContinuation<Data?, any Error>] = [:]
    private nonisolated let eventHub: Broadcaster<CairnEvent>
    private nonisolated let stateHub: Broadcaster<ConnectionState>

    /// A client of the hub at `url` with the default configuration. Nothing happens until ``connect()`` or a sign-in.
    public init(url: URL) {
        self.init(url: url, configuration: Configuration())
    }

    /// A client of the hub at `url`.
    public init(url: URL, configuration: Configuration) {
        self.url = url
        self.configuration = configuration
        self.httpURL = configuration.httpURL ?? Self.httpBase(of: url)
        var options = ConnectionCore.Options()
        options.requestTimeout = configuration.requestTimeout
        options.connectTimeout = configuration.connectTimeout
        options.reconnect = configuration.reconnect
        options.policy = configuration.reconnectPolicy
        options.maxMessageBytes = configuration.maxMessageBytes
        self.core = ConnectionCore(options: options, token: configuration.token, random: configuration.random)
        self.eventHub = Broadcaster(buffer: configuration.eventBuffer)
        self.stateHub = Broadcaster(initial: .disconnected, buffer: 64)
    }

    /// Every event from now on, in order: a new stream per call, each getting every event. It ends after
    /// ``close()``. A subscriber that does not keep up loses the oldest (``Configuration/eventBuffer``).
    public nonisolated var events: AsyncStream<CairnEvent> { eventHub.stream() }

    /// The connection's state: the current one first, then every change. It ends after ``close()``.
    public nonisolated var states: AsyncStream<ConnectionState> { stateHub.stream() }

    /// The connection's state now.
    public var state: ConnectionState { core.state }

    /// The signed-in user, or `nil`.
    public var user: CairnUser? { core.user }

    /// The token the client signs in with after a reconnect, or `nil`. Keep it to stay signed in across launches.
    public var token: String? { core.token }

    /// Opens the connection (and signs in with the token, if the client has one) and returns once connected.
    /// Failed attempts are retried with back-off. Throws on a terminal close, on ``close()``, or when the hub refuses
    /// the token (`unauthorized` or `suspended`; the connection then stays open, signed out); throws
    /// `CancellationError` when its task is cancelled (the client keeps trying; ``close()`` stops it).
    public func connect() async throws {
        _ = try await wait { $0.connect() }
    }

    /// Ends the client for good: closes the connection, fails waiting requests with `closed`, and ends
    /// ``events`` and ``states``.
    public func close() async {
        perform(core.close())
        for (_, timer) in timers { timer.task.cancel() }
        timers.removeAll()
    }

    /// Sends `op` with `fields` and returns the reply without `id` and `ok`. While the connection is being
    /// (re)established the request waits for it, within its timeout.
    ///
    /// This is the way to every op the typed API does not cover (the `admin.*` ops, `place.upsert`, …):
    /// `try await client.request("admin.users", ["q": "al"])["users"]`.
    /// - Throws: ``CairnError``: the hub's code, or `timeout`, `disconnected`, `closed`, `too_large`, `bad_request`
    ///   (a NaN or infinite number in `fields`); `CancellationError` when the task is cancelled (a request already
    ///   sent is not withdrawn: the hub may still carry it out).
    @discardableResult
    public func request(_ op: String, _ fields: [String: JSONValue] = [:], timeout: Duration? = nil) async throws
        -> JSONValue
    {
        var reply = try await request(op, fields, as: JSONValue.self, timeout: timeout)
        if case .object(var members) = reply {
            members["id"] = nil
            members["ok"] = nil
            reply = .object(members)
        }
        return reply
    }

    /// Sends `op` with `fields` and decodes the reply as `Reply` (a `Decodable` whose keys are the reply's fields).
    /// - Throws: ``CairnError``; `invalid_reply` when the reply does not decode as `Reply`.
    public func request<Reply: Decodable>(
        _ op: String, _ fields: [String: JSONValue] = [:], as type: Reply.Type, timeout: Duration? = nil
    ) async throws -> Reply {
        let line = try await wait { $0.request(op, fields: fields, timeout: timeout) } ?? Data("{}".utf8)
        do {
            return try JSONDecoder().decode(Reply.self, from: line)
        } catch {
            throw CairnError(code: CairnError.invalidReply, message: "unexpected reply to '\(op)': \(error)", op: op)
        }
    }

    /// Sends a watch op (`friends.watch`, `items.watch`, `pictures.watch`, `stats.watch`) and keeps sending it again
    /// after every reconnect, until ``unwatch(_:)`` or a sign-out. A watch the hub refuses, or whose task is cancelled,
    /// is not kept. Watching the
    /// same op again replaces its fields. After a reconnect, the fresh answers of `friends.watch` and `items.watch`
    /// arrive as ``CairnEvent/friendPositions(_:)`` and ``CairnEvent/itemPositions(_:)``.
    public func watch<Reply: Decodable>(
        _ op: String, _ fields: [String: JSONValue] = [:], as type: Reply.Type
    ) async throws -> Reply {
        core.addWatch(op, fields: fields)
        do {
            return try await request(op, fields, as: Reply.self)
        } catch let error as CairnError {
            if !error.isLocal { core.removeWatch(op) }
            throw error
        } catch {
            // Cancelled: the caller gave up on the watch, so it is not sent again after reconnects either.
            core.removeWatch(op)
            throw error
        }
    }

    /// Stops a watch: no longer sends it after reconnects, and sends its `.unwatch` op when connected.
    public func unwatch(_ op: String) async throws {
        core.removeWatch(op)
        guard core.state == .connected, op.hasSuffix(".watch") else { return }
        try await request(String(op.dropLast(".watch".count)) + ".unwatch")
    }

    /// Whether `op` is among the watches the client sends again after reconnects.
    public func isWatching(_ op: String) -> Bool { core.isWatching(op) }

    /// Sends an op without waiting for a reply (`pos` goes this way). While not connected a `pos` is held and sent
    /// after the reconnect, only the latest one; see ``report(latitude:longitude:accuracy:)``.
    func send(position fields: [String: JSONValue]) throws {
        if core.closedForGood { throw CairnError(code: CairnError.closed, message: "the client was closed", op: "pos") }
        perform(core.report(fields))
    }

    /// Keeps a new session's token and user for reconnects.
    func adopt(_ session: Session) {
        core.adopt(user: session.user, token: session.token)
    }

    /// Forgets the session, the watches and a held position.
    func forgetSession() {
        core.forgetSession()
    }

    // MARK: - Driving the core

    /// Runs a step of the core that makes a caller wait, and waits for it to be resolved. A cancelled task stops
    /// waiting at once with `CancellationError` (its request is forgotten; one already sent is not withdrawn).
    private func wait(_ step: (inout ConnectionCore) -> (ConnectionCore.Key, [ConnectionCore.Effect])) async throws
        -> Data?
    {
        try Task.checkCancellation()
        let ticket = CancelTicket()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let (key, effects) = step(&core)
                waiters[key] = continuation
                perform(effects)
                if ticket.bind(key) { giveUp(key) }
            }
        } onCancel: {
            if let key = ticket.cancel() { Task { await self.giveUp(key) } }
        }
    }

    /// A waiting caller's task was cancelled: forget what it waits for and resume it with `CancellationError`.
    private func giveUp(_ key: ConnectionCore.Key) {
        guard let continuation = waiters.removeValue(forKey: key) else { return }
        perform(core.cancel(key))
        continuation.resume(throwing: CancellationError())
    }

    private func perform(_ effects: [ConnectionCore.Effect]) {
        var outgoing: [(generation: Int, lines: [String])] = []
        func flush() {
            for batch in outgoing { sendBatch(batch.lines, on: batch.generation) }
            outgoing.removeAll()
        }
        for effect in effects {
            switch effect {
            case .open(let generation):
                openSocket(generation)
            case .send(let generation, let line):
                if let last = outgoing.indices.last, outgoing[last].generation == generation {
                    outgoing[last].lines.append(line)
                } else {
                    outgoing.append((generation, [line]))
                }
            case .closeSocket(let generation, let code):
                flush()
                sockets.removeValue(forKey: generation)?.close(code: code, reason: "")
            case .startTimer(let timer, let delay):
                arm(timer, after: delay)
            case .cancelTimer(let timer):
                timers.removeValue(forKey: timer)?.task.cancel()
            case .resolve(let key, let result):
                waiters.removeValue(forKey: key)?.resume(with: result.mapError { $0 as any Error })
            case .event(let name, let line):
                eventHub.yield(CairnEvent(name: name, line: line))
            case .watchRenewed(let op, let line):
                if op == "friends.watch", let reply = try? JSONDecoder().decode(FriendsWatchReply.self, from: line) {
                    eventHub.yield(.friendPositions(reply.positions))
                } else if op == "items.watch",
                    let reply = try? JSONDecoder().decode(ItemsWatchReply.self, from: line)
                {
                    eventHub.yield(.itemPositions(reply.positions))
                }
            case .state(let state):
                stateHub.yield(state)
            case .closed(let info):
                eventHub.yield(.closed(info))
            case .signedOut(let error):
                eventHub.yield(.signedOut(error))
            case .finished:
                flush()
                eventHub.finish()
                stateHub.finish()
            }
        }
        flush()
    }

    /// Joins the lines of one batch into messages no larger than the hub takes.
    private func sendBatch(_ lines: [String], on generation: Int) {
        guard let socket = sockets[generation] else { return }
        let limit = configuration.maxMessageBytes
        var frame = ""
        var size = 0
        for line in lines {
            let bytes = line.utf8.count
            if !frame.isEmpty && size + 1 + bytes > limit {
                socket.send(frame)
                frame = ""
                size = 0
            }
            frame = frame.isEmpty ? line : frame + "\n" + line
            size += (size == 0 ? 0 : 1) + bytes
        }
        if !frame.isEmpty { socket.send(frame) }
    }

    private func openSocket(_ generation: Int) {
        let socket = configuration.transport.open(
            url: url, subprotocol: Self.subprotocol, maxMessageBytes: configuration.maxInboundMessageBytes)
        sockets[generation] = socket
        Task {
            for await event in socket.events {
                self.handle(event, generation: generation)
            }
        }
    }

    private func handle(_ event: CairnSocketEvent, generation: Int) {
        switch event {
        case .opened:
            perform(core.socketOpened(generation: generation, now: .now))
        case .text(let text):
            perform(core.received(generation: generation, text: text, now: .now))
        case .closed(let code, let reason):
            sockets[generation] = nil
            perform(core.socketClosed(generation: generation, code: code, reason: reason, now: .now))
        }
    }

    private func arm(_ timer: ConnectionCore.Timer, after delay: Duration) {
        timers[timer]?.task.cancel()
        timerSerial += 1
        let serial = timerSerial
        let task = Task {
            try? await Task.sleep(for: delay)
            if Task.isCancelled { return }
            self.fire(timer, serial: serial)
        }
        timers[timer] = (serial, task)
    }

    private func fire(_ timer: ConnectionCore.Timer, serial: UInt64) {
        guard timers[timer]?.serial == serial else { return }
        timers[timer] = nil
        perform(core.timerFired(timer, now: .now))
    }

    /// The hub's HTTP base for a WebSocket URL: `ws://h:p/ws` → `http://h:p`, `wss://h/x/ws` → `https://h/x`.
    static func httpBase(of url: URL) -> URL {
        guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        parts.scheme = (parts.scheme == "wss" || parts.scheme == "https") ? "https" : "http"
        var path = parts.path
        if path.hasSuffix("/") { path.removeLast() }
        if path.hasSuffix("/ws") { path.removeLast(3) }
        parts.path = path
        parts.query = nil
        parts.fragment = nil
        return parts.url ?? url
    }
}

/// Tells a waiting caller's cancellation handler, which may run on any thread at any time, which key it waits on.
final class CancelTicket: @unchecked Sendable {
    private let lock = NSLock()
    private var key: ConnectionCore.Key?
    private var cancelled = false

    /// Records the key; whether the task was cancelled already (then the caller gives up at once).
    func bind(_ key: ConnectionCore.Key) -> Bool {
        lock.locked {
            self.key = key
            return cancelled
        }
    }

    /// Records the cancellation; the key to give up on, if it is known yet.
    func cancel() -> ConnectionCore.Key? {
        lock.locked {
            cancelled = true
            return key
        }
    }
}

struct FriendsWatchReply: Decodable {
    var positions: [FriendPosition]
}

struct ItemsWatchReply: Decodable {
    var positions: [ItemPosition]
}

/// A reply whose fields do not matter (`{}`).
struct EmptyReply: Decodable {}
