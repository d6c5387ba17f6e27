// The hub as what the transport drives: a thin adapter from `ConnectionHandler` (CairnLoop) to `Hub`, so the
// transport knows no hub and the hub no transport. The periodic tick also publishes the stats channel, with the
// transport's gauges read through a closure the composition sets. Kept thin on purpose: a protocol-layer router
// is to take the hub's place behind the same protocol.
import CairnDomain
import CairnLoop
import CairnServer

/// Drives a `Hub` on the transport's behalf. Loop thread only.
final class HubConnectionHandler: ConnectionHandler {
    private let hub: Hub
    /// What only the transport knows, for a stats reading; set by the composition once the server exists.
    var transportGauges: () -> TransportGauges = {
        preconditionFailure("the composition sets transportGauges before the server starts")
    }

    init(hub: Hub) { self.hub = hub }

    var outbound: (any Outbound)? {
        get { hub.outbound }
        set { hub.outbound = newValue }
    }

    func connectionOpened(_ id: ConnectionID, token: String?) { hub.connectionOpened(id, token: token) }

    func received(_ id: ConnectionID, frame: UnsafeRawBufferPointer) { hub.received(id, frame: frame) }

    func receivedBinary(_ id: ConnectionID) { hub.receivedBinary(id) }

    func connectionClosed(_ id: ConnectionID) { hub.connectionClosed(id) }

    /// The hub's housekeeping, then the stats channel (which also starts new latency windows).
    func tick() {
        hub.tick()
        hub.publishStats(transport: transportGauges)
    }

    func beginShutdown(_ done: @escaping () -> Void) { hub.beginShutdown(done) }

    var operationsInFlight: Int { hub.operationsInFlight }

    var health: HandlerHealth {
        HandlerHealth(connections: hub.connectionCount, authenticated: hub.authenticatedCount,
                      watching: hub.watchingCount, positions: hub.livePositions)
    }
}

extension TransportGauges {
    /// The transport's gauges as the domain's stats reading wants them.
    init(_ gauges: ServerGauges) {
        self.init(pendingCoalesced: gauges.pendingCoalesced, pendingOutboundBytes: gauges.pendingOutboundBytes,
                  residentBytes: gauges.residentBytes, uptimeSeconds: gauges.uptimeSeconds)
    }
}
