// The hub: the live state of every connection and user, and the dispatcher of requests. It is confined to the
// event-loop thread (the transport calls it only there; completions of slow work come back through
// `LoopScheduler`), which is why it needs no locks and is marked `@unchecked Sendable`: the only cross-thread
// traffic is the closures it hands to the scheduler. Each family of ops lives in its own `Hub+*.swift` file.
//
// Requests of one connection are handled in order. When one needs slow work (scrypt, SQLite) the connection is
// "busy" and later requests wait in a small backlog, so `auth` followed by anything in the same frame sees the
// authenticated connection, as a client would expect. Other connections are not held up.
import CairnGeo
import CairnSpatial
import CairnWire
import Logging

/// The request dispatcher and owner of live state.
public final class Hub: @unchecked Sendable {
    final class Client {
        let id: ConnectionID
        var user: User?
        var token: String?
        var busy = false
        var watching = false
        var backlog: [[UInt8]] = []
        var backlogBytes = 0
        init(id: ConnectionID) { self.id = id }
    }

    let accounts: Accounts
    let social: any SocialStore
    let relicStore: any RelicStore
    let chat: any ChatStore
    let roles: (any RoleStore)?
    let scheduler: any LoopScheduler
    let clock: any Clock
    let logger: Logger
    /// The settings in force.
    public let configuration: HubConfiguration

    /// Where replies, events and closes go. Set by the transport before the first connection.
    public weak var outbound: (any Outbound)?

    // Connections.
    var clients: [ConnectionID: Client] = [:]
    var authDeadlines: [ConnectionID: Int64] = [:]
    /// Recently revoked tokens, in revocation order (see `rememberRevoked`).
    var revokedTokens: Set<String> = []
    var revokedOrder: [String] = []
    /// Authenticated connections per user (presence: online while non-empty).
    var sessions: [Int64: [ConnectionID]] = [:]
    /// Connections watching their friends, per user.
    var watchers: [Int64: [ConnectionID]] = [:]

    // Live map.
    var graph = FriendGraph()
    var rules = ShareRules()
    var ruleVersions: [RuleKey: Int64] = [:]
    var committedRules: [RuleKey: CommittedRule] = [:]
    var lastRuleVersion: Int64 = 0
    var fixes: [Int64: Fix] = [:]
    var index: LayeredIndex
    let approximate: ApproximateGrid
    var dirty: Set<Int64> = []
    var lateFixes: [StoredFix] = []
    var flushing = false
    var lastFlushAt: Int64 = 0
    /// The last flush's duration and row count, for operators.
    public internal(set) var lastFlush: (at: Int64, rows: Int, durationMs: Int64)?
    /// How long the last flush spent on the loop in all (copying the changed fixes), in microseconds.
    public internal(set) var lastFlushLoopMicros: Int64 = 0
    /// The longest single loop turn of the last flush's collection, in microseconds.
    public internal(set) var lastFlushLongestChunkMicros: Int64 = 0
    var collecting: FlushInProgress?

    // Relics.
    var relics: RelicBook
    let relicPasswords: LoginLimiter
    var relicPurging = false
    /// `relic.create` requests in flight per user (they count against the live-relic limit).
    var pendingRelicCreates: [Int64: Int] = [:]
    var lastRelicPurgeAt: Int64 = .min / 2
    /// Signs media URLs handed to those allowed to see the media; without one, relics show media ids only.
    public var mediaSigner: (any MediaSigner)?
    /// Forces a snapshot now (tests, and the final flush at shutdown).
    public func flushPositionsNow() { flushPositions(now: clock.now()) }

    // Operations: raw counters (the transport records most of them) and the stats channel (Hub+Stats).
    /// Operational counters; the transport records traffic and latencies here on the loop.
    public let telemetry = Telemetry()
    var stats = StatsChannel()
    /// Reports the number of relics live in memory for the stats channel; nil while no relic layer is wired.
    public var relicCount: (() -> Int)?

    // Scratch space reused by every request.
    var message = Message()
    var writer = JSONWriter(capacity: 1024)
    var inFlight = 0
    var draining = false
    var finalFlushStarted = false
    var drained: (() -> Void)?

    /// Creates a hub.
    /// `roles` decides who may watch the stats channel; without it nobody may.
    public init(accounts: Accounts, social: any SocialStore, relics: any RelicStore, chat: any ChatStore,
                scheduler: any LoopScheduler, clock: any Clock,
                configuration: HubConfiguration = HubConfiguration(), roles: (any RoleStore)? = nil,
                logger: Logger = Logger(label: "cairn.hub")) {
        self.accounts = accounts
        self.social = social
        self.relicStore = relics
        self.chat = chat
        self.roles = roles
        self.relics = RelicBook(coverCellSize: configuration.relicCoverCellSize)
        self.relicPasswords = LoginLimiter(limit: configuration.relicPasswordFailures,
                                           windowMs: configuration.relicPasswordWindowMs)
        self.scheduler = scheduler
        self.clock = clock
        self.configuration = configuration
        self.logger = logger
        self.index = LayeredIndex(cellSize: configuration.indexCellSize)
        self.approximate = ApproximateGrid(cellSize: configuration.approximateCellSize)
        self.lastFlushAt = clock.now()
    }

    /// Restores the friend graph, sharing rules and last positions; call once, before serving.
    public func restore(_ snapshot: SocialSnapshot) {
        for (a, b) in snapshot.friendships { graph.addFriendship(a, b) }
        for r in snapshot.requests { graph.addRequest(from: r.from, to: r.to) }
        for r in snapshot.shareRules {
            if let viewer = r.viewerID {
                rules.set(owner: r.ownerID, viewer: viewer, level: r.level, until: r.until)
            } else if r.level == .hidden {
                rules.pause(r.ownerID, until: r.until)
            }
            let key = RuleKey(r.ownerID, r.viewerID)
            committedRules[key] = CommittedRule(entry: rules.entry(owner: r.ownerID, viewer: r.viewerID), version: r.version)
        }
        // Versions continue above anything stored, whatever the clock says after a restart.
        lastRuleVersion = max(lastRuleVersion, snapshot.maxRuleVersion)
        for p in snapshot.positions {
            fixes[p.userID] = p.fix
            if let point = GeoPoint(lat: p.fix.lat, lon: p.fix.lon) { index.upsert(p.userID, at: point, in: .users) }
        }
    }

    /// Restores the live relics; call once, before serving.
    public func restore(relics markers: [RelicMarker]) {
        for marker in markers { insertRelic(marker) }
    }

    // MARK: Counters

    /// Open connections.
    public var connectionCount: Int { clients.count }
    /// Connections bound to an account.
    public var authenticatedCount: Int { clients.values.reduce(0) { $0 + ($1.user == nil ? 0 : 1) } }
    /// Connections watching their friends.
    public var watchingCount: Int { clients.values.reduce(0) { $0 + ($1.watching ? 1 : 0) } }
    /// Users with a known position.
    public var livePositions: Int { fixes.count }
    /// Slow operations started and not yet finished.
    public var operationsInFlight: Int { inFlight }

    // MARK: Events from the transport

    /// A WebSocket connection opened. `token` is a bearer token from the upgrade request (header or `?token=`).
    public func connectionOpened(_ id: ConnectionID, token: String?) {
        let client = Client(id: id)
        clients[id] = client
        authDeadlines[id] = clock.now() + configuration.authTimeoutMs
        if let token { authenticateOnUpgrade(client, token: token) }
    }

    /// A connection closed (by either side, or because it stopped answering pings). Work still in flight for it
    /// finishes and is discarded.
    public func connectionClosed(_ id: ConnectionID) {
        guard let client = clients.removeValue(forKey: id) else { return }
        authDeadlines[id] = nil
        relics.forget(connection: id)
        stopWatchingStats(id)
        unbind(client)
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

    /// Periodic housekeeping (the transport calls it about once a second): authentication deadlines, sharing
    /// rules whose time is up, and the position snapshot.
    public func tick() {
        // Once shutting down, the drain writes the last snapshot; nothing new may reach the store after that.
        guard !draining else { return }
        let now = clock.now()
        closeExpiredAuthentications(now: now)
        expireShareRules(now: now)
        expireRelics(now: now)
        purgeOldRelics(now: now)
        if now - lastFlushAt >= configuration.snapshotIntervalMs { flushPositions(now: now) }
    }

    /// Stops taking new work and calls `done` on the loop once every operation in flight has replied and the
    /// final position snapshot is committed.
    public func beginShutdown(_ done: @escaping () -> Void) {
        draining = true
        drained = done
        // The last snapshot starts now, beside whatever is still in flight (no request moves anyone any more):
        // even if the transport stops waiting for slow requests, the positions are already on their way.
        startFinalFlush()
        finishDrainIfIdle()
    }

    private func startFinalFlush() {
        guard !finalFlushStarted, !dirty.isEmpty || !lateFixes.isEmpty else { return }
        finalFlushStarted = true  // tried once: if the store is failing, shutting down must still finish
        if flushing { finalFlushStarted = false; return }  // a flush is running; its completion retries this
        flushPositions(now: clock.now())
    }

    func finishDrainIfIdle() {
        guard draining, let done = drained else { return }
        startFinalFlush()
        guard inFlight == 0 else { return }
        if !dirty.isEmpty {
            logger.error("shutting down with \(dirty.count) position(s) not written: the final snapshot failed")
        }
        drained = nil
        done()
    }

    private func closeExpiredAuthentications(now: Int64) {
        guard !authDeadlines.isEmpty else { return }
        for (id, deadline) in authDeadlines where deadline <= now {
            guard let client = clients[id] else { authDeadlines[id] = nil; continue }
            if client.busy { continue }  // an authentication is being checked: let it finish
            authDeadlines[id] = nil
            outbound?.close(id, code: CloseCode.authTimeout.rawValue, reason: "authentication timeout")
        }
    }

    // MARK: Dispatch

    private func enqueue(_ line: UnsafeRawBufferPointer, for client: Client) {
        guard client.backlog.count < configuration.maxBacklog,
              client.backlogBytes + line.count <= configuration.maxBacklogBytes else {
            // Over the limit: answer this request at once instead of queueing it.
            let id: Int64? = (try? message.parse(line)) != nil ? message.id : nil
            fail(client, id: id, op: message.op,
                 WireError(.rateLimited, "too many requests waiting behind one in progress"))
            return
        }
        client.backlog.append(Array(line))
        client.backlogBytes += line.count
    }

    func handle(_ line: UnsafeRawBufferPointer, from client: Client) {
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
        if try dispatchAccount(op, id: id, from: client) { return }
        guard let user = client.user else {
            throw WireError(.unauthorized, "authenticate first: register, login, guest or auth")
        }
        switch op {
        case "pos": try reportPosition(id: id, from: client, user: user)
        case "friends.watch": watch(id: id, from: client, user: user)
        case "friends.unwatch": unwatch(id: id, from: client, user: user)
        case "user.search": try searchUsers(id: id, from: client, user: user)
        case "friend.request": try requestFriend(id: id, from: client, user: user)
        case "friend.accept": try acceptFriend(id: id, from: client, user: user)
        case "friend.decline": try declineFriend(id: id, from: client, user: user)
        case "friend.remove": try removeFriend(id: id, from: client, user: user)
        case "friend.list": listFriends(id: id, from: client, user: user)
        case "friend.requests": listRequests(id: id, from: client, user: user)
        case "share.pause": try pauseSharing(id: id, from: client, user: user)
        case "share.resume": resumeSharing(id: id, from: client, user: user)
        case "share.set": try setSharing(id: id, from: client, user: user)
        case "relic.create": try createRelic(id: id, from: client, user: user)
        case "relic.nearby": try browseRelics(id: id, from: client, user: user)
        case "relic.open": try openRelic(id: id, from: client, user: user)
        case "relic.mine": try listMyRelics(id: id, from: client, user: user)
        case "relic.delete": try deleteRelic(id: id, from: client, user: user)
        case "chat.send": try sendChat(id: id, from: client, user: user)
        case "chat.list": try listChats(id: id, from: client, user: user)
        case "chat.history": try chatHistory(id: id, from: client, user: user)
        case "chat.read": try readChat(id: id, from: client, user: user)
        case "stats.watch": watchStats(id: id, from: client, user: user)
        case "stats.unwatch": unwatchStats(id: id, from: client)
        default: throw .badRequest("unknown op '\(op)'")
        }
    }

    // MARK: Slow work

    /// Runs `work` off the loop while the connection waits (its later requests queue), then `then` on the loop.
    /// `then` and `onFailure` always run, because they keep memory in line with what the store now holds; the
    /// client they get is nil when the connection closed meanwhile (replies to it are then dropped). Without
    /// `onFailure`, a failure is replied as an error.
    func start<T: Sendable>(_ client: Client, id: Int64?, op: String,
                            _ work: @escaping @Sendable () async throws(WireError) -> T,
                            onFailure: ((Client?, WireError) -> Void)? = nil,
                            then: @escaping (Client?, T) -> Void) {
        client.busy = true
        inFlight += 1
        let connection = client.id
        let scheduler = self.scheduler
        // `then` and `onFailure` run on the loop only; they never cross threads, they only travel with the job.
        nonisolated(unsafe) let then = then
        nonisolated(unsafe) let onFailure = onFailure
        Task {
            let result: Result<T, WireError>
            do throws(WireError) { result = .success(try await work()) } catch { result = .failure(error) }
            scheduler.execute {
                self.finish(connection, id: id, op: op, result, onFailure: onFailure, then: then)
            }
        }
    }

    private func finish<T>(_ connection: ConnectionID, id: Int64?, op: String, _ result: Result<T, WireError>,
                           onFailure: ((Client?, WireError) -> Void)?, then: (Client?, T) -> Void) {
        inFlight -= 1
        defer { finishDrainIfIdle() }
        let client = clients[connection]
        client?.busy = false
        switch result {
        case .success(let value): then(client, value)
        case .failure(let error):
            if let onFailure { onFailure(client, error) } else { fail(client, id: id, op: op, error) }
        }
        if let client { drainBacklog(client) }
    }

    private func drainBacklog(_ client: Client) {
        while !client.busy && !client.backlog.isEmpty && clients[client.id] != nil {
            let line = client.backlog.removeFirst()
            client.backlogBytes -= line.count
            line.withUnsafeBytes { handle($0, from: client) }
        }
    }

    /// Runs store work that no connection waits for (e.g. a snapshot), then `then` on the loop.
    func background<T: Sendable>(_ work: @escaping @Sendable () async throws -> T,
                                 then: @escaping (Result<T, any Error>) -> Void) {
        inFlight += 1
        let scheduler = self.scheduler
        nonisolated(unsafe) let then = then
        Task {
            let result: Result<T, any Error>
            do { result = .success(try await work()) } catch { result = .failure(error) }
            scheduler.execute {
                self.inFlight -= 1
                then(result)
                self.finishDrainIfIdle()
            }
        }
    }

    // MARK: Writing

    func replyOK(_ client: Client?, id: Int64?, _ fields: (inout JSONWriter) -> Void) {
        guard let id, let client else { return }
        writer.reset()
        Envelope.ok(id: id, into: &writer, fields)
        flush(to: client.id)
    }

    func fail(_ client: Client?, id: Int64?, op: String?, _ error: WireError) {
        guard let client else { return }
        writer.reset()
        Envelope.failure(id: id, op: op, error: error, into: &writer)
        flush(to: client.id)
    }

    /// Writes an event to every connection of `user`.
    func push(to user: Int64, _ name: StaticString, _ fields: (inout JSONWriter) -> Void) {
        guard let connections = sessions[user], !connections.isEmpty else { return }
        writer.reset()
        Envelope.event(name, into: &writer, fields)
        for connection in connections { flush(to: connection) }
    }

    func flush(to connection: ConnectionID) {
        writer.bytes.withUnsafeBytes { outbound?.send(connection, $0) }
    }
}
