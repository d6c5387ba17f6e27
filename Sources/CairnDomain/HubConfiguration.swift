// Tunables of the hub, with the contract's defaults. Everything has a unit in its name or its comment.

/// Settings for `Hub`.
public struct HubConfiguration: Sendable {
    /// A connection that has not authenticated within this many milliseconds is closed with 4508 (contract: 10 s).
    public var authTimeoutMs: Int64 = 10_000
    /// Requests a connection may queue behind one that is still in flight (e.g. while scrypt runs); more are
    /// refused with `rate_limited`.
    public var maxBacklog = 256
    /// Bytes of requests a connection may queue that way (the count alone would allow 256 full-size messages).
    public var maxBacklogBytes = 256 * 1024
    /// A position whose implied speed since the previous one exceeds this (m/s) is flagged.
    public var maxSpeed: Double = 300
    /// A `ts` further than this in the future (ms) is refused.
    public var maxFutureMs: Int64 = 5 * 60 * 1000
    /// Positions are flushed to the store this often (ms).
    public var snapshotIntervalMs: Int64 = 5_000
    /// Cell size of the approximate-sharing grid (m).
    public var approximateCellSize: Double = 2_000
    /// Cell size of the spatial index (m).
    public var indexCellSize: Double = 500
    /// Most results `user.search` returns.
    public var searchLimit = 20
    /// Longest `for` accepted by `share.pause` and `share.set` (s): one year.
    public var maxShareDurationSeconds: Int64 = 366 * 24 * 3600

    /// The defaults above.
    public init() {}
}
