// The router: what the transport drives. It receives each connection's messages, splits frames into requests,
// parses each one with a reusable `Message` (no allocation in steady state), looks its op up in the op table,
// checks who may call it, and writes the answer the op's encoder produces — or a typed error that keeps the
// request's id whenever it could be read.
//
// Requests of one connection are answered in order. While a slow op (scrypt, SQLite) is in flight the connection
// is "busy" and its later requests wait in a small bounded backlog, so `auth` followed by anything in the same
// frame sees the authenticated connection, as a client would expect. Other connections are not held up.
//
// It also owns the local event delivery (`LocalDelivery`): the domain's events, encoded once each and written to
// this process's connections.
public import CairnCore
import CairnErrorCodes
public import CairnHub
import CairnLiveMap
public import CairnLoop
import CairnSessions
import CairnSocial
import CairnStats
import CairnTrackers
import CairnWire

/// Maps WebSocket messages to ops and ops' answers to JSON. Loop thread only.
public final class Router: ConnectionHandler {
    private struct Queue {
        var busy = false
        var backlog: [[UInt8]] = []
        var backlogBytes = 0
        var rate: MessageRate
        /// Closed for flooding: nothing more from it is read or answered.
        var closed = false
        /// Requests (lines) received, for the close's reason and the log.
        var requests = 0

        /// What to do with one more line: take a token of the request budget (`perSecond` 0: no budget), then
        /// handle it now or queue it behind a request in progress.
        mutating func admit(now: Int64, perSecond: Int, burst: Int) -> Admission {
            if closed { return .ignore }
            requests += 1
            if perSecond > 0 {
                switch rate.take(now: now, perSecond: perSecond, burst: burst) {
                case .allow: break
                case .refuse(let wait): return .refuse(retryAfterMs: wait)
                case .close:
                    closed = true
                    return .close
                }
            }
            return busy || !backlog.isEmpty ? .wait : .handle
        }
    }

    /// The fate of one line of a frame.
    private enum Admission {
        case handle, wait, ignore, close
        case refuse(retryAfterMs: Int64)
    }

    /// The hub whose features answer.
    public let hub: Hub
    /// The registered ops.
    public private(set) var table: OpTable
    private let delivery: LocalDelivery
    private let confinement: LoopConfinement
    private var queues = ConnectionMap<Queue>()
    private var message = Message()
    private var writer = JSONWriter(capacity: 1024)
    /// The op looked up last, so a stream of the same op (positions) skips the table's hashing.
    private var lastOpName = ""
    private var lastOp: OpEntry?

    /// Where replies, events and closes go. Set by the transport before the first connection.
    public var outbound: (any Outbound)? {
        get { delivery.outbound }
        set { delivery.outbound = newValue }
    }

    /// A router for `hub` with every feature's ops registered; it becomes the hub's event delivery.
    public init(hub: Hub) {
        self.hub = hub
        self.confinement = hub.confinement
        self.delivery = LocalDelivery(sessions: hub.sessions)
        var table = OpTable()
        AccountOps.register(in: &table, sessions: hub.sessions)
        FriendOps.register(in: &table, social: hub.social)
        PrivacyOps.register(in: &table, social: hub.social)
        LiveMapOps.register(in: &table, liveMap: hub.liveMap)
        RelicOps.register(in: &table, relics: hub.relics)
        ChatOps.register(in: &table, chat: hub.chat)
        ProfileOps.register(in: &table, profiles: hub.profiles)
        BucketOps.register(in: &table, buckets: hub.buckets)
        TrackerOps.register(in: &table, trackers: hub.trackers)
        PictureOps.register(in: &table, pictures: hub.pictures, administration: hub.administration)
        EventOps.register(
            in: &table, events: hub.pictureEvents, pictures: hub.pictures, administration: hub.administration)
        SafeZoneOps.register(in: &table, safeZones: hub.safeZones)
        PlaceOps.register(in: &table, places: hub.places)
        StatsOps.register(in: &table, channel: hub.statsChannel)
        AdminOps.register(in: &table, administration: hub.administration)
        self.table = table
        hub.attach(delivery)
    }

    /// Several nodes: a delivery of positions to and from viewers on other nodes, sharing this router's encodings
    /// and slots, attached to the live map as its `remote`. Call on the loop, before serving.
    public func attachClusterDelivery() -> ClusterDelivery {
        confinement.assertOnLoop()
        let cluster = ClusterDelivery(
            local: delivery, sessions: hub.sessions, clock: hub.clock, maxAgeMs: hub.configuration.watchMaxAgeMs)
        cluster.allowed = { [unowned hub] owner, viewer in
            hub.social.areFriends(owner, viewer)
                ? hub.social.level(owner: owner, viewer: viewer, now: hub.clock.now()) : .hidden
        }
        hub.liveMap.remote = cluster
        return cluster
    }

    /// Several nodes: user-addressed news for users connected to other nodes, and from other nodes for users here
    /// (`ClusterNews`); `online` says whether a user is connected elsewhere. Call on the loop, before serving.
    public func attachClusterNews(online: @escaping (Int64) -> Bool) -> ClusterNews {
        confinement.assertOnLoop()
        let news = ClusterNews(local: delivery, sessions: hub.sessions)
        news.elsewhere = online
        news.bucketChanged = { [unowned hub] users in hub.trackers.bucketNewsHeard(users) }
        news.bucketRemoved = { [unowned hub] bucket, users in hub.trackers.bucketNewsHeard(users, lost: bucket) }
        news.judgesAlerts = { [unowned hub] user in hub.trackers.judgesAlerts(for: user) }
        delivery.news = news
        return news
    }

    // MARK: ConnectionHandler

    public func connectionOpened(_ id: ConnectionID, token: String?, peer: String?) {
        confinement.assertOnLoop()
        // A token from the upgrade is checked off the loop; requests that arrive meanwhile wait for it, so the
        // first one already sees the authenticated connection.
        queues[id] = Queue(
            busy: token != nil,
            rate: MessageRate(
                burst: hub.configuration.messageBurst,
                now: hub.clock.now()))
        hub.sessions.open(id, token: token, peer: peer) { [unowned self] in self.finished(id) }
    }

    /// A connection whose source address is unknown (benchmarks, tests): no per-address limits apply to it.
    public func connectionOpened(_ id: ConnectionID, token: String?) {
        connectionOpened(id, token: token, peer: nil)
    }

    public func connectionClosed(_ id: ConnectionID) {
        confinement.assertOnLoop()
        guard queues.removeValue(forKey: id) != nil else { return }
        hub.sessions.close(id)
    }

    public func received(_ id: ConnectionID, frame: UnsafeRawBufferPointer) {
        confinement.assertOnLoop()
        let limits = hub.configuration
        let now = limits.messagesPerSecond > 0 ? hub.clock.now() : 0
        FrameLines.forEach(in: frame) { line in
            // One look-up per line, and the queue changed in its slot: the budget is taken and the queue's state read
            // together (in place, not through the optional subscript, which moves the queue out and back).
            let admission = queues.update(id) {
                $0.admit(now: now, perSecond: limits.messagesPerSecond, burst: limits.messageBurst)
            }
            guard let admission else { return }
            switch admission {
            case .handle: handle(line, from: id)
            case .wait: enqueue(line, for: id)
            case .refuse(let wait): refuse(line, from: id, retryAfterMs: wait)
            case .close:
                let sent = queues[id]?.requests ?? 0
                delivery.outbound?.close(
                    id, code: CloseCode.tooManyRequests.rawValue, reason: "too many requests (\(sent) sent)")
            case .ignore: return
            }
        }
    }

    public func receivedBinary(_ id: ConnectionID) {
        confinement.assertOnLoop()
        guard queues[id] != nil else { return }
        fail(id, id: nil, op: nil, .badRequest("binary frames are not accepted; send UTF-8 JSON text frames"))
    }

    /// What only the transport knows, for the stats channel's reading; without it, `tick` publishes no stats.
    public var transportGauges: (() -> TransportGauges)?

    /// The hub's housekeeping, then the stats channel (which also starts new latency windows).
    public func tick() {
        hub.tick()
        if let transportGauges { hub.publishStats(transport: transportGauges) }
    }

    public func beginShutdown(_ done: @escaping () -> Void) { hub.beginShutdown(done) }

    public var operationsInFlight: Int { hub.operationsInFlight }

    public var health: HandlerHealth {
        HandlerHealth(
            connections: hub.connectionCount, authenticated: hub.authenticatedCount,
            watching: hub.watchingCount, positions: hub.livePositions,
            cluster: hub.statsChannel.clusterReading.map { $0().redisUp ? "ok" : "degraded" })
    }

    // MARK: Dispatch

    /// Answers a request over the connection's rate with `rate_limited`, keeping its id when it can be read.
    private func refuse(_ line: UnsafeRawBufferPointer, from connection: ConnectionID, retryAfterMs: Int64) {
        let id: Int64? = (try? message.parse(line)) != nil ? message.id : Message.salvageID(from: line)
        let error = WireError(.rateLimited, "too many requests; slow down")
            .with(.init("retry_after_ms", retryAfterMs))
        fail(connection, id: id, op: id == nil ? message.op : nil, error)
    }

    private func enqueue(_ line: UnsafeRawBufferPointer, for connection: ConnectionID) {
        let limits = hub.configuration
        guard let queue = queues[connection], queue.backlog.count < limits.maxBacklog,
            queue.backlogBytes + line.count <= limits.maxBacklogBytes
        else {
            // Over the limit: answer this request at once instead of queueing it.
            let id: Int64? = (try? message.parse(line)) != nil ? message.id : Message.salvageID(from: line)
            fail(
                connection, id: id, op: message.op,
                WireError(.rateLimited, "too many requests waiting behind one in progress"))
            return
        }
        queues[connection]!.backlog.append(Array(line))
        queues[connection]!.backlogBytes += line.count
    }

    private func handle(_ line: UnsafeRawBufferPointer, from connection: ConnectionID) {
        do {
            try message.parse(line)
        } catch {
            // A reply the client can match is better than an `error` event: keep the id whenever it can be read.
            fail(connection, id: Message.salvageID(from: line), op: nil, error)
            return
        }
        let id = message.id
        guard let op = message.op else {
            fail(connection, id: id, op: nil, .badRequest("missing field 'op'"))
            return
        }
        do {
            try dispatch(op, id: id, from: connection)
        } catch {
            fail(connection, id: id, op: op, error)
        }
    }

    private func dispatch(_ op: String, id: Int64?, from connection: ConnectionID) throws(WireError) {
        if hub.isDraining { throw WireError(.internal, "the server is shutting down; reconnect shortly") }
        let entry: OpEntry
        if let last = lastOp, op == lastOpName {
            entry = last
        } else if let found = table.entries[op] {
            entry = found
            lastOp = found
            lastOpName = op
        } else {
            guard hub.sessions.user(of: connection) != nil else { throw DomainError.unauthenticated.wire }
            throw .badRequest("unknown op '\(op)'")
        }
        let user = hub.sessions.user(of: connection)
        if entry.access == .member && user == nil { throw DomainError.unauthenticated.wire }
        if let user { hub.noteActive(user) }  // active today: a set insertion
        let answer = Answer(router: self, connection: connection, id: id, op: op)
        guard entry.slow else {
            try entry.run(message, connection, user, answer, nil)
            return
        }
        // A slow op may answer now or later; until it does, the connection's later requests wait. An answer
        // given before `run` returns needs no draining: the loop that called us takes the next request.
        var during = true
        var answeredNow = false
        queues[connection]?.busy = true
        do {
            try entry.run(message, connection, user, answer) { [unowned self] in
                if during { answeredNow = true } else { self.finished(connection) }
            }
        } catch {
            queues[connection]?.busy = false
            throw error
        }
        during = false
        if answeredNow { queues[connection]?.busy = false }
    }

    /// A slow op answered: the connection takes its next waiting request.
    private func finished(_ connection: ConnectionID) {
        guard queues[connection] != nil else { return }
        queues[connection]!.busy = false
        drainBacklog(connection)
    }

    private func drainBacklog(_ connection: ConnectionID) {
        while let queue = queues[connection], !queue.busy, !queue.backlog.isEmpty {
            let line = queues[connection]!.backlog.removeFirst()
            queues[connection]!.backlogBytes -= line.count
            line.withUnsafeBytes { handle($0, from: connection) }
        }
    }

    // MARK: Writing

    func replyOK(_ connection: ConnectionID, id: Int64?, _ fields: (inout JSONWriter) -> Void) {
        guard let id, queues[connection] != nil else { return }
        writer.reset()
        Envelope.ok(id: id, into: &writer, fields)
        flush(to: connection)
    }

    func fail(_ connection: ConnectionID, id: Int64?, op: String?, _ error: WireError) {
        guard queues[connection] != nil else { return }
        writer.reset()
        Envelope.failure(id: id, op: op, error: error, into: &writer)
        flush(to: connection)
    }

    private func flush(to connection: ConnectionID) {
        writer.bytes.withUnsafeBytes { delivery.outbound?.send(connection, $0) }
    }
}
