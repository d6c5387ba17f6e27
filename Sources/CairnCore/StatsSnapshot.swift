// One reading of every operational figure, assembled on the loop from the hub's state, the `Telemetry` counters
// and what only the transport knows (`TransportGauges`). The stats channel writes it as the `stats` event once a
// second and the Prometheus exporter turns it into metrics; both read the same numbers, so they never disagree.
import CairnLoop

/// What the transport adds to a stats reading (it alone sees connection buffers and the process).
public struct TransportGauges: Sendable {
    /// Positions waiting in latest-wins slots, over all connections (coalesced: a newer one replaces an older).
    public var pendingCoalesced: Int
    /// Bytes waiting to be written, over all connections.
    public var pendingOutboundBytes: Int
    /// Resident memory of the process in bytes, if the platform tells.
    public var residentBytes: Int64?
    /// Seconds since the transport started.
    public var uptimeSeconds: Double

    /// Creates the value.
    public init(pendingCoalesced: Int, pendingOutboundBytes: Int, residentBytes: Int64?, uptimeSeconds: Double) {
        self.pendingCoalesced = pendingCoalesced
        self.pendingOutboundBytes = pendingOutboundBytes
        self.residentBytes = residentBytes
        self.uptimeSeconds = uptimeSeconds
    }
}

/// The last position snapshot written to the store.
public struct SnapshotReading: Sendable, Equatable {
    /// Creates the value.
    public init(ageMs: Int64, durationMs: Int64, rows: Int) {
        self.ageMs = ageMs
        self.durationMs = durationMs
        self.rows = rows
    }

    /// Milliseconds since it started.
    public var ageMs: Int64
    /// Milliseconds it took from the start of collection to the commit.
    public var durationMs: Int64
    /// Rows written.
    public var rows: Int
}

/// Every operational figure at one instant.
public struct StatsSnapshot: Sendable {
    /// When it was taken, ms since the epoch (the hub's clock).
    public var ts: Int64
    /// Open WebSocket connections.
    public var connections: Int
    /// Connections bound to an account.
    public var authenticated: Int
    /// Connections watching their friends.
    public var watching: Int
    /// Connections watching the stats channel.
    public var statsWatchers: Int
    /// Connections accepted since start.
    public var connectionsOpened: UInt64
    /// WebSocket messages received since start.
    public var messagesReceived: UInt64
    /// WebSocket messages written since start.
    public var messagesSent: UInt64
    /// Payload bytes received since start.
    public var bytesReceived: UInt64
    /// Payload bytes written since start.
    public var bytesSent: UInt64
    /// Positions accepted since start.
    public var positionsAccepted: UInt64
    /// Positions written to watchers since start.
    public var deliveries: UInt64
    /// Fan-out latency median over the last window, ns (nil: no delivery in the window).
    public var fanoutP50Ns: UInt64?
    /// Fan-out latency 99th percentile over the last window, ns.
    public var fanoutP99Ns: UInt64?
    /// Deliveries timed in the last window.
    public var fanoutSamples: UInt64
    /// Event-loop lag 99th percentile over the last window, ns.
    public var loopLagP99Ns: UInt64?
    /// Largest event-loop lag over the last window, ns.
    public var loopLagMaxNs: UInt64?
    /// Positions waiting in latest-wins slots.
    public var pendingCoalesced: Int
    /// Bytes waiting to be written.
    public var pendingOutboundBytes: Int
    /// Users with a live position in memory.
    public var positionsLive: Int
    /// Relics live in memory; nil when no relic layer reports a count.
    public var relicsLive: Int?
    /// The last snapshot written, nil before the first.
    public var lastSnapshot: SnapshotReading?
    /// Store operations in flight (requests awaiting SQLite, snapshot writes).
    public var operationsInFlight: Int
    /// Position rows waiting for the next snapshot.
    public var pendingSnapshotRows: Int
    /// Resident memory, bytes.
    public var residentBytes: Int64?
    /// Seconds since start.
    public var uptimeSeconds: Double
    /// What became of trackers' reports and fixes since start.
    public var ingest = IngestCounts()
    /// Places by category, and what the places feature has done since start.
    public var places = PlaceCounts()
    /// The node's link to the other nodes through Redis; nil on a single node.
    public var cluster: ClusterReading?
}

extension StatsSnapshot {
    /// A reading at `ts` with every figure zero or unknown (for building readings field by field).
    public init(ts: Int64) {
        self.init(
            ts: ts, connections: 0, authenticated: 0, watching: 0, statsWatchers: 0, connectionsOpened: 0,
            messagesReceived: 0, messagesSent: 0, bytesReceived: 0, bytesSent: 0, positionsAccepted: 0,
            deliveries: 0, fanoutP50Ns: nil, fanoutP99Ns: nil, fanoutSamples: 0, loopLagP99Ns: nil,
            loopLagMaxNs: nil, pendingCoalesced: 0, pendingOutboundBytes: 0, positionsLive: 0, relicsLive: nil,
            lastSnapshot: nil, operationsInFlight: 0, pendingSnapshotRows: 0, residentBytes: nil,
            uptimeSeconds: 0)
    }
}

/// The traffic counters at one instant: what per-second rates are computed from.
public struct TrafficTotals: Sendable, Equatable {
    /// When they were read, ms since the epoch.
    public var ts: Int64
    /// Messages received since start.
    public var messagesIn: UInt64
    /// Messages written since start.
    public var messagesOut: UInt64
    /// Bytes received since start.
    public var bytesIn: UInt64
    /// Bytes written since start.
    public var bytesOut: UInt64

    /// Creates the value.
    public init(ts: Int64, messagesIn: UInt64, messagesOut: UInt64, bytesIn: UInt64, bytesOut: UInt64) {
        self.ts = ts
        self.messagesIn = messagesIn
        self.messagesOut = messagesOut
        self.bytesIn = bytesIn
        self.bytesOut = bytesOut
    }
}

extension StatsSnapshot {
    /// The traffic counters of this reading.
    public var totals: TrafficTotals {
        TrafficTotals(
            ts: ts, messagesIn: messagesReceived, messagesOut: messagesSent, bytesIn: bytesReceived,
            bytesOut: bytesSent)
    }
}

/// Per-second rates between two readings.
public struct StatsRates: Sendable, Equatable {
    /// Messages received per second.
    public var messagesIn: Double
    /// Messages written per second.
    public var messagesOut: Double
    /// Bytes received per second.
    public var bytesIn: Double
    /// Bytes written per second.
    public var bytesOut: Double

    /// The rates from `earlier` to `later`; nil unless time moved forward between them.
    public init?(from earlier: TrafficTotals, to later: TrafficTotals) {
        let seconds = Double(later.ts - earlier.ts) / 1000
        guard seconds > 0 else { return nil }
        func rate(_ a: UInt64, _ b: UInt64) -> Double { b >= a ? Double(b - a) / seconds : 0 }
        messagesIn = rate(earlier.messagesIn, later.messagesIn)
        messagesOut = rate(earlier.messagesOut, later.messagesOut)
        bytesIn = rate(earlier.bytesIn, later.bytesIn)
        bytesOut = rate(earlier.bytesOut, later.bytesOut)
    }
}
