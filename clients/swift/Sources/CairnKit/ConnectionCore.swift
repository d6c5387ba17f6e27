// The client's brain, free of I/O: the connection's state machine, request/reply matching, timeouts as named timers,
// the close-code policy and back-off, signing in again with the token after a reconnect, re-sending the watches and
// the latest position held while offline. It takes inputs (a socket opened, text received, a timer fired, a request
// made) and answers with effects for the driver (``CairnClient``) to carry out: open a socket, send text, start or
// cancel a timer, resolve a waiting caller, emit an event. It mirrors clients/js/cairn.js.
import Foundation

/// The state of the connection as an app shows it.
public enum ConnectionState: Sendable, Equatable {
    /// Opening a socket, signing in again and re-sending the watches.
    case connecting
    /// Signed in again (when there is a session) and watching again: whatever moves from now on is pushed.
    case connected
    /// No connection: before ``CairnClient/connect()``, between reconnect attempts, after a terminal close or
    /// ``CairnClient/close()``.
    case disconnected
}

/// How a connection ended, as the ``CairnEvent/closed(_:)`` event tells it.
public struct CloseInfo: Sendable, Equatable {
    /// The close code (1006 when the hub sent none).
    public var code: UInt16
    /// The close reason.
    public var reason: String
    /// Whether the client will reconnect by itself.
    public var willReconnect: Bool
    /// The delay before the next attempt, when it will reconnect.
    public var delay: Duration?
}

/// The I/O-free core of a ``CairnClient``.
struct ConnectionCore {
    /// A caller waiting for something: a request's reply or `connect()`.
    typealias Key = UInt64

    /// What the driver arms and the core is told about when it fires.
    enum Timer: Hashable {
        /// A request's (or the handshake's own request's) timeout.
        case request(Key)
        /// The opening handshake's timeout.
        case open
        /// The pause before the next reconnect attempt.
        case reconnect
    }

    /// What the driver does for the core.
    enum Effect: Equatable {
        /// Open a socket; later inputs name it by `generation`.
        case open(generation: Int)
        /// Send one line on the socket (the driver joins the lines of one batch into one message).
        case send(generation: Int, line: String)
        /// Close the socket.
        case closeSocket(generation: Int, code: UInt16)
        /// Arm a timer (replacing one of the same name).
        case startTimer(Timer, Duration)
        /// Disarm a timer.
        case cancelTimer(Timer)
        /// Resume a waiting caller: with the reply line (`nil` for `connect()`), or an error.
        case resolve(Key, Result<Data?, CairnError>)
        /// A push event arrived: its name and its line.
        case event(name: String, line: Data)
        /// A watch was sent again after a reconnect and answered: the op and its reply line.
        case watchRenewed(op: String, line: Data)
        /// The state changed.
        case state(ConnectionState)
        /// The connection closed.
        case closed(CloseInfo)
        /// The session ended without `logout`: the token was refused at a reconnect, or a close revoked it.
        case signedOut(CairnError?)
        /// The client is closed for good: end the streams.
        case finished
    }

    /// Tunables, from ``CairnClient/Configuration``.
    struct Options {
        var requestTimeout: Duration = .seconds(15)
        var connectTimeout: Duration = .seconds(10)
        var reconnect = true
        var policy = ReconnectPolicy()
        var maxMessageBytes = 65_536
    }

    /// Ops that (re)authenticate a connection: the client opens a connection for them when it has none.
    static let authOps: Set<String> = ["register", "login", "guest", "auth"]

    private enum Purpose {
        case caller
        case auth
        case rewatch(String)
    }

    private struct Pending {
        var key: Key
        var op: String
        var fields: [String: JSONValue]
        var purpose: Purpose
        var generation = 0
    }

    private enum Phase: Equatable {
        case idle
        case opening
        case authenticating
        case rewatching
        case connected
    }

    let options: Options
    private let random: () -> Double

    private(set) var state = ConnectionState.disconnected
    private(set) var token: String?
    private(set) var user: CairnUser?
    private(set) var closedForGood = false

    private var phase = Phase.idle
    private var generation = 0
    private var hasSocket = false
    private var reconnectScheduled = false
    private var wanted = false
    private var nextKey: Key = 1
    private var nextID: Int64 = 1
    private var inFlight: [Int64: Pending] = [:]
    private var waiting: [Pending] = []
    private var watches: [(op: String, fields: [String: JSONValue])] = []
    private var rewatchesLeft = 0
    private var heldPosition: [String: JSONValue]?
    private var connectWaiters: [Key] = []
    private var refusal: CairnError?
    private var attempt = 0
    private var connectedAt: ContinuousClock.Instant?

    init(options: Options, token: String?, random: @escaping () -> Double) {
        self.options = options
        self.token = token
        self.random = random
    }

    /// The ops of the watches sent again after every reconnect, in the order they were first made.
    var watchedOps: [String] { watches.map(\.op) }

    /// The position held for the next connection, if any.
    var heldPositionFields: [String: JSONValue]? { heldPosition }

    // MARK: - Calls from the app

    /// `connect()`: opens the connection unless it is open or opening; the key is resolved once connected.
    mutating func connect() -> (Key, [Effect]) {
        let key = makeKey()
        if closedForGood {
            return (
                key, [.resolve(key, .failure(CairnError(code: CairnError.closed, message: "the client was closed")))]
            )
        }
        wanted = true
        if state == .connected { return (key, [.resolve(key, .success(nil))]) }
        connectWaiters.append(key)
        if !hasSocket && !reconnectScheduled { return (key, open()) }
        return (key, [])
    }

    /// A request with a reply. Waits for the connection while one is being made.
    mutating func request(_ op: String, fields: [String: JSONValue], timeout: Duration? = nil) -> (Key, [Effect]) {
        let key = makeKey()
        if closedForGood {
            return (
                key,
                [.resolve(key, .failure(CairnError(code: CairnError.closed, message: "the client was closed", op: op)))]
            )
        }
        let idle = !hasSocket && !reconnectScheduled
        if idle && !Self.authOps.contains(op) {
            let error = CairnError(
                code: CairnError.disconnected, message: "not connected: call connect() first", op: op)
            return (key, [.resolve(key, .failure(error))])
        }
        var effects: [Effect] = [.startTimer(.request(key), timeout ?? options.requestTimeout)]
        let entry = Pending(key: key, op: op, fields: fields, purpose: .caller)
        if phase == .connected {
            effects += transmit(entry)
        } else {
            waiting.append(entry)
        }
        // Signing in reopens a connection the hub ended (e.g. 4508 while a sign-in form was open).
        if idle {
            wanted = true
            effects += open()
        }
        return (key, effects)
    }

    /// A position: sent now without an id when connected, otherwise held (latest wins) for the next connection.
    mutating func report(_ fields: [String: JSONValue]) -> [Effect] {
        if closedForGood { return [] }
        if phase == .connected, hasSocket {
            guard let line = Self.line(op: "pos", id: nil, fields: fields) else { return [] }
            return [.send(generation: generation, line: line)]
        }
        heldPosition = fields
        return []
    }

    /// The caller of `key` gave up (its task was cancelled): forgets its request, whether it waits for the connection
    /// or for its reply (a request already sent is not withdrawn from the hub; its reply is ignored), or its wait in
    /// `connect()`. The driver resumes the caller itself.
    mutating func cancel(_ key: Key) -> [Effect] {
        waiting.removeAll { $0.key == key }
        for (id, entry) in inFlight where entry.key == key {
            if case .caller = entry.purpose { inFlight[id] = nil }
        }
        connectWaiters.removeAll { $0 == key }
        return [.cancelTimer(.request(key))]
    }

    /// Starts re-sending `op` after every reconnect (replacing its fields if it is watched already).
    mutating func addWatch(_ op: String, fields: [String: JSONValue]) {
        if let index = watches.firstIndex(where: { $0.op == op }) {
            watches[index].fields = fields
        } else {
            watches.append((op, fields))
        }
    }

    /// Stops re-sending `op`.
    mutating func removeWatch(_ op: String) {
        watches.removeAll { $0.op == op }
    }

    /// Whether `op` is re-sent after reconnects.
    func isWatching(_ op: String) -> Bool { watches.contains { $0.op == op } }

    /// A sign-in succeeded: keep the token for reconnects.
    mutating func adopt(user: CairnUser, token: String) {
        self.user = user
        self.token = token
    }

    /// A sign-out: forget the token, the user, the watches and any held position.
    mutating func forgetSession() {
        token = nil
        user = nil
        watches.removeAll()
        heldPosition = nil
    }

    /// `close()`: for good.
    mutating func close() -> [Effect] {
        if closedForGood { return [] }
        closedForGood = true
        wanted = false
        var effects: [Effect] = []
        if reconnectScheduled {
            reconnectScheduled = false
            effects.append(.cancelTimer(.reconnect))
        }
        if hasSocket {
            effects += [.cancelTimer(.open), .closeSocket(generation: generation, code: 1000)]
            hasSocket = false
        }
        phase = .idle
        effects += failAll(CairnError(code: CairnError.closed, message: "the client was closed"))
        heldPosition = nil
        effects += setState(.disconnected)
        effects.append(.finished)
        return effects
    }

    // MARK: - Inputs from the socket and the timers

    /// The socket's handshake is done: sign in with the token, then re-send the watches.
    mutating func socketOpened(generation: Int, now: ContinuousClock.Instant) -> [Effect] {
        guard hasSocket, generation == self.generation, phase == .opening else { return [] }
        var effects: [Effect] = [.cancelTimer(.open)]
        refusal = nil
        if let token {
            phase = .authenticating
            let key = makeKey()
            let entry = Pending(key: key, op: "auth", fields: ["token": .string(token)], purpose: .auth)
            effects.append(.startTimer(.request(key), options.requestTimeout))
            effects += transmit(entry)
            return effects
        }
        return effects + rewatch(now: now)
    }

    /// A text message: replies are matched to their requests, events are passed on.
    mutating func received(generation: Int, text: String, now: ContinuousClock.Instant) -> [Effect] {
        guard hasSocket, generation == self.generation else { return [] }
        var effects: [Effect] = []
        for piece in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let data = Data(piece.utf8)
            guard let head = try? JSONDecoder().decode(Head.self, from: data) else { continue }
            if let name = head.ev {
                effects.append(.event(name: name, line: data))
                continue
            }
            guard let id = head.id, let entry = inFlight.removeValue(forKey: id) else { continue }
            effects.append(.cancelTimer(.request(entry.key)))
            let result: Result<Data?, CairnError> =
                head.ok == true ? .success(data) : .failure(CairnError(wire: head.error, op: entry.op))
            effects += finish(entry, result, now: now)
        }
        return effects
    }

    /// The socket closed (or was given up on): fail what was in flight on it, then reconnect unless the close was
    /// terminal.
    mutating func socketClosed(
        generation: Int, code: UInt16, reason: String, now: ContinuousClock.Instant
    ) -> [Effect] {
        guard hasSocket, generation == self.generation else { return [] }
        hasSocket = false
        phase = .idle
        var effects: [Effect] = [.cancelTimer(.open)]
        for (id, entry) in inFlight where entry.generation == generation {
            inFlight[id] = nil
            effects.append(.cancelTimer(.request(entry.key)))
            if case .caller = entry.purpose {
                let error = CairnError(
                    code: CairnError.disconnected, message: "connection lost before the reply (\(code))", op: entry.op,
                    closeCode: code)
                effects.append(.resolve(entry.key, .failure(error)))
            }
        }
        let terminal = ReconnectPolicy.isTerminal(closeCode: code)
        let reconnect = wanted && options.reconnect && !terminal
        // Only a connection that stayed up a while earns a fresh back-off.
        if let connectedAt, connectedAt.duration(to: now) >= options.policy.stableAfter { attempt = 0 }
        connectedAt = nil
        var info = CloseInfo(code: code, reason: reason, willReconnect: reconnect, delay: nil)
        if reconnect {
            let delay = options.policy.delay(attempt: attempt, closeCode: code, random: random())
            attempt = min(attempt + 1, 30)
            info.delay = delay
            reconnectScheduled = true
            effects.append(.startTimer(.reconnect, delay))
        } else {
            wanted = false
            if ReconnectPolicy.endsSession(closeCode: code), token != nil {
                forgetSession()
                effects.append(.signedOut(CairnError(code: "unauthorized", message: reason, closeCode: code)))
            }
            let message = "closed by the hub: \(code) \(reason)".trimmingCharacters(in: .whitespaces)
            effects += failAll(CairnError(code: CairnError.disconnected, message: message, closeCode: code))
            heldPosition = nil
        }
        effects.append(.closed(info))
        effects += setState(.disconnected)
        return effects
    }

    /// A timer fired.
    mutating func timerFired(_ timer: Timer, now: ContinuousClock.Instant) -> [Effect] {
        switch timer {
        case .open:
            return abandon(reason: "opening handshake timed out", now: now)
        case .reconnect:
            reconnectScheduled = false
            if wanted && !hasSocket && !closedForGood { return open() }
            return []
        case .request(let key):
            if let index = waiting.firstIndex(where: { $0.key == key }) {
                let entry = waiting.remove(at: index)
                return [.resolve(key, .failure(Self.timeoutError(entry.op)))]
            }
            guard let (id, entry) = inFlight.first(where: { $0.value.key == key }) else { return [] }
            inFlight[id] = nil
            return finish(entry, .failure(Self.timeoutError(entry.op)), now: now)
        }
    }

    // MARK: - Internals

    private struct Head: Decodable {
        var id: Int64?
        var ok: Bool?
        var ev: String?
        var error: JSONValue?
    }

    private static func timeoutError(_ op: String) -> CairnError {
        CairnError(code: CairnError.timeout, message: "no reply to '\(op)' in time", op: op)
    }

    private mutating func makeKey() -> Key {
        defer { nextKey += 1 }
        return nextKey
    }

    private mutating func open() -> [Effect] {
        generation += 1
        hasSocket = true
        phase = .opening
        return setState(.connecting) + [
            .open(generation: generation), .startTimer(.open, options.connectTimeout),
        ]
    }

    /// Gives up on a socket that does not answer: handled as a lost connection, then closed.
    private mutating func abandon(reason: String, now: ContinuousClock.Instant) -> [Effect] {
        guard hasSocket else { return [] }
        let current = generation
        return socketClosed(generation: current, code: 1006, reason: reason, now: now)
            + [.closeSocket(generation: current, code: 4000)]
    }

    private mutating func transmit(_ entry: Pending) -> [Effect] {
        let id = nextID
        nextID += 1
        guard let line = Self.line(op: entry.op, id: id, fields: entry.fields) else {
            let error = CairnError(
                code: "bad_request", message: "request fields hold a number JSON cannot carry (NaN or infinity)",
                op: entry.op)
            return [.cancelTimer(.request(entry.key)), .resolve(entry.key, .failure(error))]
        }
        if line.utf8.count > options.maxMessageBytes {
            let error = CairnError(
                code: CairnError.tooLarge, message: "request over \(options.maxMessageBytes) bytes", op: entry.op)
            return [.cancelTimer(.request(entry.key)), .resolve(entry.key, .failure(error))]
        }
        var entry = entry
        entry.generation = generation
        inFlight[id] = entry
        return [.send(generation: generation, line: line)]
    }

    /// A request of the handshake, or a caller's, was answered (or timed out).
    private mutating func finish(_ entry: Pending, _ result: Result<Data?, CairnError>, now: ContinuousClock.Instant)
        -> [Effect]
    {
        switch entry.purpose {
        case .caller:
            return [.resolve(entry.key, result)]
        case .auth:
            switch result {
            case .success(let line):
                if let line, let reply = try? JSONDecoder().decode(AuthReply.self, from: line) {
                    user = reply.user
                }
                return rewatch(now: now)
            case .failure(let error) where error.code == "unauthorized" || error.code == "suspended":
                refusal = error
                forgetSession()
                return [.signedOut(error)] + rewatch(now: now)
            case .failure(let error):
                // No answer (a timeout): try again on a new connection.
                return abandon(reason: "authentication failed: \(error.message)", now: now)
            }
        case .rewatch(let op):
            var effects: [Effect] = []
            switch result {
            case .success(let line):
                if let line { effects.append(.watchRenewed(op: op, line: line)) }
            case .failure(let error) where !error.isLocal:
                removeWatch(op)
                let event = JSONValue.object(["ev": "error", "op": .string(op), "error": error.details])
                if let line = try? JSONEncoder().encode(event) { effects.append(.event(name: "error", line: line)) }
            case .failure:
                break
            }
            rewatchesLeft -= 1
            if rewatchesLeft == 0, phase == .rewatching { effects += becomeConnected(now: now) }
            return effects
        }
    }

    private struct AuthReply: Decodable {
        var user: CairnUser
    }

    /// Sends every watch again; "connected" waits for their replies, so that whatever moves afterwards is pushed.
    private mutating func rewatch(now: ContinuousClock.Instant) -> [Effect] {
        phase = .rewatching
        guard user != nil, !watches.isEmpty else { return becomeConnected(now: now) }
        var effects: [Effect] = []
        rewatchesLeft = watches.count
        for watch in watches {
            let key = makeKey()
            let entry = Pending(key: key, op: watch.op, fields: watch.fields, purpose: .rewatch(watch.op))
            effects.append(.startTimer(.request(key), options.requestTimeout))
            effects += transmit(entry)
        }
        return effects
    }

    private mutating func becomeConnected(now: ContinuousClock.Instant) -> [Effect] {
        var effects: [Effect] = []
        if user != nil, let heldPosition, let line = Self.line(op: "pos", id: nil, fields: heldPosition) {
            effects.append(.send(generation: generation, line: line))
        }
        heldPosition = nil
        connectedAt = now
        phase = .connected
        effects += setState(.connected)
        let queued = waiting
        waiting = []
        for entry in queued { effects += transmit(entry) }
        let waiters = connectWaiters
        connectWaiters = []
        let outcome: Result<Data?, CairnError> = refusal.map { .failure($0) } ?? .success(nil)
        for key in waiters { effects.append(.resolve(key, outcome)) }
        return effects
    }

    private mutating func failAll(_ error: CairnError) -> [Effect] {
        var effects: [Effect] = []
        for entry in inFlight.values.sorted(by: { $0.key < $1.key }) + waiting {
            effects.append(.cancelTimer(.request(entry.key)))
            if case .caller = entry.purpose {
                var error = error
                error.op = entry.op
                effects.append(.resolve(entry.key, .failure(error)))
            }
        }
        inFlight.removeAll()
        waiting.removeAll()
        for key in connectWaiters { effects.append(.resolve(key, .failure(error))) }
        connectWaiters.removeAll()
        return effects
    }

    private mutating func setState(_ new: ConnectionState) -> [Effect] {
        guard state != new else { return [] }
        state = new
        return [.state(new)]
    }

    /// One request line: the fields with `op` and, for a request with a reply, `id`; `nil` when a field cannot be
    /// written as JSON (a NaN or an infinite number).
    static func line(op: String, id: Int64?, fields: [String: JSONValue]) -> String? {
        var object = fields
        object["op"] = .string(op)
        if let id { object["id"] = .int(id) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(JSONValue.object(object)) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
