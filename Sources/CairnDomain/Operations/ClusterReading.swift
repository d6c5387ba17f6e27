// What a node sharing state with others through Redis reports about that link: whether Redis is reachable now and
// how often the link came back. Read at /healthz, on the stats channel and at /metrics; nil on a single node.

/// The state of a node's cluster link.
public struct ClusterReading: Sendable, Equatable {
    /// True while the node's connections to Redis are up; false while it serves only its own connections.
    public var redisUp: Bool
    /// Times the link to Redis came back after being lost, since start.
    public var reconnects: UInt64

    /// Creates the reading.
    public init(redisUp: Bool, reconnects: UInt64) {
        self.redisUp = redisUp
        self.reconnects = reconnects
    }
}
