// What a node sharing state with others through Redis reports about that link: whether Redis is reachable now and
// how often the link came back, the cross-node position messages it published, received and dropped, and how
// often another process was found using its node name. Read at /healthz, on the stats channel and at /metrics; nil
// on a single node.

/// The state of a node's cluster link.
public struct ClusterReading: Sendable, Equatable {
    /// True while the node's connections to Redis are up; false while it serves only its own connections.
    public var redisUp: Bool
    /// Times the link to Redis came back after being lost, since start.
    public var reconnects: UInt64
    /// Cross-node position messages published by this node (privacy applied here, for viewers elsewhere).
    public var published: UInt64
    /// Well-formed cross-node messages received for viewers here.
    public var received: UInt64
    /// Cross-node messages received and dropped (malformed, or not about their channel's user).
    public var dropped: UInt64
    /// Times another running process was found using this node's name (`cluster.node` must be unique).
    public var nodeNameConflicts: UInt64

    /// Creates the reading.
    public init(
        redisUp: Bool, reconnects: UInt64, published: UInt64 = 0, received: UInt64 = 0, dropped: UInt64 = 0,
        nodeNameConflicts: UInt64 = 0
    ) {
        self.redisUp = redisUp
        self.reconnects = reconnects
        self.published = published
        self.received = received
        self.dropped = dropped
        self.nodeNameConflicts = nodeNameConflicts
    }
}
