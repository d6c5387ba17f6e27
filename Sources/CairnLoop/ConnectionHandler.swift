// What the transport drives. The transport knows sockets, frames and HTTP; it does not know what a message means.
// It hands every WebSocket event of every connection to one `ConnectionHandler`, calls `tick` about once a second,
// and asks it to drain at shutdown. All of it on the loop thread.

/// Counts the transport's `/healthz` reports, as the handler sees them.
public struct HandlerHealth: Sendable, Equatable {
    /// Open connections the handler knows.
    public var connections: Int
    /// Connections bound to an account.
    public var authenticated: Int
    /// Connections watching their friends.
    public var watching: Int
    /// Users with a known position.
    public var positions: Int
    /// The link to the other nodes: "ok", or "degraded" while Redis is away (the node still serves its own
    /// connections); nil on a single node.
    public var cluster: String?

    /// Creates the figures.
    public init(connections: Int, authenticated: Int, watching: Int, positions: Int, cluster: String? = nil) {
        self.connections = connections
        self.authenticated = authenticated
        self.watching = watching
        self.positions = positions
        self.cluster = cluster
    }
}

/// The application side of the transport. Every call is made on the loop thread.
public protocol ConnectionHandler: AnyObject {
    /// Where replies, events and closes go; set by the transport before the first connection, nil after the last.
    var outbound: (any Outbound)? { get set }
    /// A WebSocket connection opened. `token` is a bearer token from the upgrade request (header or `?token=`);
    /// `peer` is the source address of the TCP connection as text (an IPv4 or IPv6 address), when known.
    func connectionOpened(_ id: ConnectionID, token: String?, peer: String?)
    /// A complete text message arrived: one or more JSON objects separated by newlines.
    func received(_ id: ConnectionID, frame: UnsafeRawBufferPointer)
    /// A complete binary message arrived.
    func receivedBinary(_ id: ConnectionID)
    /// The connection closed, by either side.
    func connectionClosed(_ id: ConnectionID)
    /// Periodic housekeeping, about once a second.
    func tick()
    /// Stop taking new work; call `done` on the loop once everything in flight has finished.
    func beginShutdown(_ done: @escaping () -> Void)
    /// Slow operations started and not yet finished (the transport waits for them at shutdown).
    var operationsInFlight: Int { get }
    /// The figures `/healthz` reports.
    var health: HandlerHealth { get }
}
