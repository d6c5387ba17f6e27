// What only the transport can tell about itself at an instant: what waits in connection buffers, the process's
// memory and how long the server has run. Read on demand (the stats channel, /metrics); the composition turns it
// into whatever its readers want.

/// The transport's gauges at one instant.
public struct ServerGauges: Sendable, Equatable {
    /// Objects waiting in latest-wins slots, over all connections (a newer one replaces an older).
    public var pendingCoalesced: Int
    /// Bytes waiting to be written, over all connections.
    public var pendingOutboundBytes: Int
    /// Resident memory of the process in bytes, if the platform tells.
    public var residentBytes: Int64?
    /// Seconds since the server was created.
    public var uptimeSeconds: Double

    /// Creates the value.
    public init(pendingCoalesced: Int, pendingOutboundBytes: Int, residentBytes: Int64?, uptimeSeconds: Double) {
        self.pendingCoalesced = pendingCoalesced
        self.pendingOutboundBytes = pendingOutboundBytes
        self.residentBytes = residentBytes
        self.uptimeSeconds = uptimeSeconds
    }
}
