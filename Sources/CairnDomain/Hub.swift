// The hub: the live state of every connection and the dispatcher of requests. It is confined to the event-loop
// thread (the transport calls it only there; completions of slow work come back through `LoopScheduler`), which
// is why it needs no locks and is marked `@unchecked Sendable`: the only cross-thread traffic is the closures it
// hands to the scheduler.
//
// Requests of one connection are handled in order. When one needs slow work (scrypt, SQLite) the connection is
// "busy" and later requests wait in a small backlog, so `auth` followed by anything in the same frame sees the
// authenticated connection, as a client would expect. Other connections are not held up.
import CairnWire
import Logging

/// The request dispatcher and owner of connection state.
public final class Hub: @unchecked Sendable {
    private final class Client {
        let id: ConnectionID
        var user: User?
        var token: String?
        var busy = false
        var backlog: [[UInt8]] = []
        init(id: ConnectionID) { self.id = id }
    }

    private enum Outcome: Sendable {
        case session(Session)
        case user(User, token: String)
        case loggedOut
    }

    private let accounts: Accounts
    private let scheduler: any LoopScheduler
    private let clock: any Clock
    private let logger: Logger
    /// The settings in force.
    public let configuration: HubConfiguration

    /// Where replies, events and closes go. Set by the transport before the first connection.
    public weak var outbound: (any Outbound)?

    private var clients: [ConnectionID: Client] = [:]
    private var authDeadlines: [ConnectionID: Int64] = [:]
    private var message = Message()
    private var writer = JSONWriter(capacity: 1024)
    private var inFlight = 0
    private var draining = false
    private var drained: (() -> Void)?

    /// Creates a hub.
    public init(accounts: Accounts, scheduler: any LoopScheduler, clock: any Clock,
                configuration: HubConfiguration = HubConfiguration(), logger: Logger = Logger(label: "cairn.hub")) {
        self.accounts = accounts
        self.scheduler = scheduler
        self.clock = clock
        self.configuration = configuration
        self.logger = logger
    }

    // MARK: Counters

    /// Open connections.
    public var connectionCount: Int { clients.count }
    /// Connections bound to an account.
    public var authenticatedCount: Int { clients.values.reduce(0) { $0 + ($1.user == nil ? 0 : 1) } }
    /// Slow operations started and not yet finished.
    public var operationsInFlight: Int { inFlight }

    // MARK: Events from the transport

    /// A WebSocket connection opened. `token` is a bearer token from the upgrade request (header or `?token=`).
    public func connectionOpened(_ id: ConnectionID, token: String?) {
        let client = Client(id: id)
        clients[id] = client
        authDeadlines[id] = clock.now() + configuration.authTimeoutMs
        if let token {
            let accounts = self.accounts
            start(client, id: nil, op: "auth", closeOnFailure: true) { () async throws(WireError) -> Outcome in
                .user(try await accounts.authenticate(token: token), token: token)
            }
        }
    }

    /// A connection closed (by either side). Work still in flight for it finishes and is discarded.
    public func connectionClosed(_ id: ConnectionID) {
        clients[id] = nil
        authDeadlines[id] = nil
    }

    /// A complete text message arrived: one or more JSON objects separated by newlines.
    public func received(_ id: ConnectionID, frame: UnsafeRawBufferPointer) {
        guard let client = clients[id] else { return }
        FrameLines.forEach(in: frame) { line in
            if client.busy || !client.backlog.isEmpty {
                enqueue(line, for: client)
            } else {
                handle(line, from: client)
            }
        }
    }

    /// A binary message arrived; the protocol is text only.
    public func receivedBinary(_ id: ConnectionID) {
        guard let client = clients[id] else { return }
        fail(client, id: nil, op: nil, .badRequest("binary frames are not accepted; send UTF-8 JSON text frames"))
    }

    /// Periodic housekeeping (the transport calls it about once a second): closes connections whose
    /// authentication deadline has passed.
    public func tick() {
        guard !authDeadlines.isEmpty else { return }
        let now = clock.now()
        for (id, deadline) in authDeadlines where deadline <= now {
            guard let client = clients[id] else { authDeadlines[id] = nil; continue }
            if client.busy { continue }  // an authentication is being checked: let it finish
            authDeadlines[id] = nil
            outbound?.close(id, code: .authTimeout, reason: "authentication timeout")
        }
    }

    /// Stops taking new work and calls `done` on the loop once every operation in flight has replied.
    public func beginShutdown(_ done: @escaping () -> Void) {
        draining = true
        if inFlight == 0 { done() } else { drained = done }
    }

    // MARK: Dispatch

    private func enqueue(_ line: UnsafeRawBufferPointer, for client: Client) {
        guard client.backlog.count < configuration.maxBacklog else {
            // Over the limit: answer this request at once instead of queueing it.
            let id: Int64? = (try? message.parse(line)) != nil ? message.id : nil
            fail(client, id: id, op: message.op,
                 WireError(.rateLimited, "too many requests waiting behind one in progress"))
            return
        }
        client.backlog.append(Array(line))
    }

    private func handle(_ line: UnsafeRawBufferPointer, from client: Client) {
        do {
            try message.parse(line)
        } catch {
            fail(client, id: nil, op: nil, error)
            return
        }
        let id = message.id
        guard let op = message.op else {
            fail(client, id: id, op: nil, .badRequest("missing field 'op'"))
            return
        }
        do {
            try dispatch(op, id: id, from: client)
        } catch {
            fail(client, id: id, op: op, error)
        }
    }

    private func dispatch(_ op: String, id: Int64?, from client: Client) throws(WireError) {
        if draining { throw WireError(.internal, "the server is shutting down; reconnect shortly") }
        let accounts = self.accounts
        switch op {
        case "register":
            let username = try message.requireString("username")
            let password = try message.requireString("password")
            let name = try message.string("name")
            start(client, id: id, op: op) { () async throws(WireError) -> Outcome in
                .session(try await accounts.register(username: username, password: password, name: name))
            }
        case "login":
            let username = try message.requireString("username")
            let password = try message.requireString("password")
            let connection = client.id
            start(client, id: id, op: op) { () async throws(WireError) -> Outcome in
                .session(try await accounts.login(username: username, password: password, connection: connection))
            }
        case "guest":
            start(client, id: id, op: op) { () async throws(WireError) -> Outcome in
                .session(try await accounts.guest())
            }
        case "auth":
            let token = try message.requireString("token")
            start(client, id: id, op: op) { () async throws(WireError) -> Outcome in
                .user(try await accounts.authenticate(token: token), token: token)
            }
        case "logout":
            guard let token = client.token else {
                replyOK(client, id: id) { _ in }
                return
            }
            start(client, id: id, op: op) { () async throws(WireError) -> Outcome in
                try await accounts.logout(token: token)
                return .loggedOut
            }
        default:
            guard let user = client.user else {
                throw WireError(.unauthorized, "authenticate first: register, login, guest or auth")
            }
            switch op {
            case "whoami":
                replyOK(client, id: id) { w in
                    w.key("user"); user.write(to: &w)
                }
            default:
                throw .badRequest("unknown op '\(op)'")
            }
        }
    }

    // MARK: Slow work

    private func start(_ client: Client, id: Int64?, op: String, closeOnFailure: Bool = false,
                       _ work: @escaping @Sendable () async throws(WireError) -> Outcome) {
        client.busy = true
        inFlight += 1
        let connection = client.id
        let scheduler = self.scheduler
        Task {
            let result: Result<Outcome, WireError>
            do throws(WireError) { result = .success(try await work()) } catch { result = .failure(error) }
            scheduler.execute { self.finish(connection, id: id, op: op, closeOnFailure: closeOnFailure, result) }
        }
    }

    private func finish(_ connection: ConnectionID, id: Int64?, op: String, closeOnFailure: Bool,
                        _ result: Result<Outcome, WireError>) {
        inFlight -= 1
        defer {
            if draining && inFlight == 0, let done = drained {
                drained = nil
                done()
            }
        }
        guard let client = clients[connection] else { return }
        client.busy = false
        switch result {
        case .success(.session(let session)):
            bind(client, to: session.user, token: session.token)
            replyOK(client, id: id) { w in
                w.key("user"); session.user.write(to: &w)
                w.key("token"); w.string(session.token)
            }
        case .success(.user(let user, let token)):
            bind(client, to: user, token: token)
            replyOK(client, id: id) { w in
                w.key("user"); user.write(to: &w)
            }
        case .success(.loggedOut):
            let revoked = client.token
            unbind(client)
            replyOK(client, id: id) { _ in }
            // Every other connection that used the revoked token loses its session too.
            for other in clients.values where other.id != client.id && other.token == revoked {
                unbind(other)
                outbound?.close(other.id, code: .invalidToken, reason: "token revoked")
            }
        case .failure(let error):
            if closeOnFailure {
                outbound?.close(client.id, code: .invalidToken, reason: "invalid token")
                return
            }
            fail(client, id: id, op: op, error)
        }
        drainBacklog(client)
    }

    private func drainBacklog(_ client: Client) {
        while !client.busy && !client.backlog.isEmpty && clients[client.id] != nil {
            let line = client.backlog.removeFirst()
            line.withUnsafeBytes { handle($0, from: client) }
        }
    }

    private func bind(_ client: Client, to user: User, token: String) {
        client.user = user
        client.token = token
        authDeadlines[client.id] = nil
    }

    private func unbind(_ client: Client) {
        client.user = nil
        client.token = nil
        authDeadlines[client.id] = clock.now() + configuration.authTimeoutMs
    }

    // MARK: Writing

    private func replyOK(_ client: Client, id: Int64?, _ fields: (inout JSONWriter) -> Void) {
        guard let id else { return }
        writer.reset()
        Envelope.ok(id: id, into: &writer, fields)
        flush(to: client.id)
    }

    private func fail(_ client: Client, id: Int64?, op: String?, _ error: WireError) {
        writer.reset()
        Envelope.failure(id: id, op: op, error: error, into: &writer)
        flush(to: client.id)
    }

    private func flush(to connection: ConnectionID) {
        writer.bytes.withUnsafeBytes { outbound?.send(connection, $0) }
    }
}
