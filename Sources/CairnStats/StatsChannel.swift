// The stats channel for operators: watch and unwatch, and the `stats` event pushed to watchers once a second.
// Whether a user is an operator is asked of the `RoleStore` off the loop on every watch, so a grant or revocation
// made with `cairn user grant-ops` / `revoke-ops` counts from the next request, no restart. With nobody watching a
// second costs next to nothing: new latency windows and four counters remembered for the next rates.
//
// A reading (`StatsSnapshot`) gathers figures every feature offers through its API; the transport adds what only
// it knows (`TransportGauges`).
public import CairnCore
import CairnErrorCodes
package import CairnLiveMap
public import CairnLoop
package import CairnSessions

/// The stats channel: its watchers and the previous second's totals. Loop thread only.
public final class StatsChannel {
    private let roles: (any RoleStore)?
    private let work: LoopWork
    private let clock: any Clock
    private let sessions: Sessions
    private let liveMap: LiveMap
    /// Operational counters; the transport records traffic and latencies here on the loop.
    public let telemetry: Telemetry
    package var events: (any HubEvents)?

    /// Connections watching, in the order they started.
    private var watchers: [ConnectionID] = []
    /// The traffic counters at the previous tick, for per-second rates.
    private var previous: TrafficTotals?
    /// Reports the number of relics live in memory; nil while no relic layer is wired.
    package var relicCount: (() -> Int)?
    /// Reports the node's link to the other nodes; nil on a single node.
    package var clusterReading: (() -> ClusterReading)?

    package init(
        roles: (any RoleStore)?, work: LoopWork, clock: any Clock, sessions: Sessions, liveMap: LiveMap,
        telemetry: Telemetry
    ) {
        self.roles = roles
        self.work = work
        self.clock = clock
        self.sessions = sessions
        self.liveMap = liveMap
        self.telemetry = telemetry
    }

    /// True while at least one connection watches the stats channel.
    public var isWatched: Bool { !watchers.isEmpty }

    /// Starts sending `stats` to the caller's connection, if the caller is an operator; answers the interval in ms.
    public func watch(_ caller: Caller, _ done: @escaping Outcome<Int64>) {
        guard let roles else { return done(.failure(DomainError(.forbidden, "the stats channel is for operators"))) }
        let me = caller.user.id
        let connection = caller.connection
        work.run(
            { () async throws(DomainError) -> Bool in
                try await LoopWork.storage { try await roles.hasRole(.ops, userID: me) }
            },
            then: { result in
                guard case .success(let isOps) = result else { return done(result.map { _ in 1000 }) }
                // The connection may have closed, logged out or switched accounts while the role was checked.
                guard self.sessions.user(of: connection)?.id == me else {
                    return done(.failure(DomainError(.unauthorized, "the session ended")))
                }
                guard isOps else {
                    return done(
                        .failure(
                            DomainError(
                                .forbidden,
                                "the stats channel is for operators (cairn user grant-ops)")))
                }
                if !self.watchers.contains(connection) { self.watchers.append(connection) }
                done(.success(1000))
            })
    }

    /// Stops sending `stats` to a connection.
    public func unwatch(_ connection: ConnectionID) {
        watchers.removeAll { $0 == connection }
    }

    /// Every figure now. `transport` supplies what only the transport knows. Reads the current latency windows
    /// without resetting them.
    package func snapshot(transport: TransportGauges) -> StatsSnapshot {
        let now = clock.now()
        let t = telemetry
        var reading = StatsSnapshot(ts: now)
        reading.connections = sessions.connectionCount
        reading.authenticated = sessions.authenticatedCount
        reading.watching = sessions.watchingCount
        reading.statsWatchers = watchers.count
        reading.connectionsOpened = t.connectionsOpened
        reading.messagesReceived = t.messagesReceived
        reading.messagesSent = t.messagesSent
        reading.bytesReceived = t.bytesReceived
        reading.bytesSent = t.bytesSent
        reading.positionsAccepted = t.positionsAccepted
        reading.deliveries = t.deliveries
        reading.fanoutP50Ns = t.fanoutWindow.quantile(0.5)
        reading.fanoutP99Ns = t.fanoutWindow.quantile(0.99)
        reading.fanoutSamples = t.fanoutWindow.count
        reading.loopLagP99Ns = t.loopLagWindow.quantile(0.99)
        reading.loopLagMaxNs = t.loopLagWindow.count > 0 ? t.loopLagWindow.max : nil
        reading.pendingCoalesced = transport.pendingCoalesced
        reading.pendingOutboundBytes = transport.pendingOutboundBytes
        reading.positionsLive = liveMap.count
        reading.relicsLive = relicCount?()
        reading.lastSnapshot = liveMap.lastSnapshot(now: now)
        reading.operationsInFlight = work.inFlight
        reading.pendingSnapshotRows = liveMap.pendingRows
        reading.residentBytes = transport.residentBytes
        reading.uptimeSeconds = transport.uptimeSeconds
        reading.cluster = clusterReading?()
        return reading
    }

    /// Once a second: pushes a `stats` event to every operator watching and starts new latency windows.
    /// `transport` is called only when someone watches.
    package func publish(transport: () -> TransportGauges) {
        defer { telemetry.resetWindows() }
        guard !watchers.isEmpty else {
            let t = telemetry
            previous = TrafficTotals(
                ts: clock.now(), messagesIn: t.messagesReceived, messagesOut: t.messagesSent,
                bytesIn: t.bytesReceived, bytesOut: t.bytesSent)
            return
        }
        let reading = snapshot(transport: transport())
        let rates = previous.flatMap { StatsRates(from: $0, to: reading.totals) }
        previous = reading.totals
        events?.publish(.stats(reading, rates), toConnections: watchers)
    }
}
