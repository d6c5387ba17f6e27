// Tunables of the hub's request handling, with the contract's defaults.

/// Settings for `Hub`.
public struct HubConfiguration: Sendable {
    /// A connection that has not authenticated within this many milliseconds is closed with 4508 (contract: 10 s).
    public var authTimeoutMs: Int64 = 10_000
    /// Requests a connection may queue behind one that is still in flight (e.g. while scrypt runs); more are
    /// refused with `rate_limited`.
    public var maxBacklog = 256

    /// The defaults above.
    public init() {}
}
