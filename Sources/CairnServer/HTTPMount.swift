// Where a service is mounted: a path prefix (or `/` for whatever else is asked), the largest request body the
// transport accepts for it, and the share of the body budget its bodies draw on. The service itself (`HTTPService`,
// CairnLoop) knows nothing of the mount; the transport matches paths and enforces the body limit before the service
// sees a byte.
public import CairnLoop

/// A service mounted on a path prefix, with the largest request body it accepts.
public struct HTTPMount: Sendable {
    /// The prefix: requests for exactly this path or below it (`prefix/...`) go to `service`. A mount on `/` takes
    /// every path that no earlier mount and none of the transport's own routes (`/healthz`, `/metrics`, `/ws`) take:
    /// put it last.
    public var prefix: String
    /// The service.
    public var service: any HTTPService
    /// The largest body accepted; a larger declared or received body is answered 413 without reaching the service.
    public var maxBodyBytes: Int
    /// The share of the server's body budget its bodies draw on (`BodyBudget`).
    public var pool: HTTPBodyPool

    /// Creates a mount.
    public init(prefix: String, service: any HTTPService, maxBodyBytes: Int, pool: HTTPBodyPool = .uploads) {
        self.prefix = prefix
        self.service = service
        self.maxBodyBytes = maxBodyBytes
        self.pool = pool
    }

    func matches(_ path: String) -> Bool {
        prefix == "/" || path == prefix || path.hasPrefix(prefix + "/")
    }
}
