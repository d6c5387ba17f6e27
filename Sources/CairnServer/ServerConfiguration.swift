// Transport settings, with the contract's defaults. Passed into `WebSocketServer` at start; nothing global.

/// How the service thread waits for socket events.
public enum EventLoopBackend: String, Sendable, CaseIterable {
    /// A libev loop (epoll on Linux): the kernel reports only the ready descriptors, so a wake-up costs the same
    /// with ten connections or ten thousand. Needs libev and the libwebsockets libev plugin at run time.
    case libev
    /// libwebsockets' own poll() loop: no plugin needed, but every wake-up scans every descriptor.
    case poll
}

/// The oldest TLS version the hub accepts (TLS 1.0 and 1.1 are never offered).
public enum TLSMinimumVersion: String, Sendable {
    /// TLS 1.2 and 1.3.
    case tls12
    /// TLS 1.3 only.
    case tls13
}

/// Settings for the WebSocket/HTTP transport.
public struct ServerConfiguration: Sendable {
    /// Address to listen on. `127.0.0.1` keeps the hub private to the machine; use `0.0.0.0` to expose it.
    public var host = "127.0.0.1"
    /// TCP port for HTTP and WebSocket; 0 picks a free ephemeral port (reported by `start`).
    public var port = 7681
    /// Largest inbound WebSocket message in bytes; larger ones close the connection with 1009 (contract: 64 KiB).
    public var maxMessageBytes = 64 * 1024
    /// Bytes a connection may have waiting to be written before it is closed with 4001 as too slow.
    public var maxOutboundBytes = 1 << 20
    /// Seconds without traffic before the server pings a connection.
    public var pingIntervalSeconds = 30
    /// Seconds without any valid traffic (including pongs) before the connection is dropped.
    public var idleTimeoutSeconds = 60
    /// Seconds a connection the server closes (too slow, a session ended, ...) has to take what is pending for it
    /// and the close frame; a client that does not read by then is dropped without them.
    public var closeTimeoutSeconds = 5
    /// Seconds to wait for clients to acknowledge the closing handshake at shutdown.
    public var shutdownGraceSeconds = 5
    /// What waits for socket events: libev on epoll (the default), or libwebsockets' built-in poll() loop.
    public var eventLoop: EventLoopBackend = .libev
    /// Write each loop turn's frames with one io_uring submission (plain sockets; where the kernel refuses io_uring,
    /// or with TLS, each frame is a send() of its own, as with this off).
    public var ioUring = true
    /// Raise the soft open-file limit to at most this many descriptors (bounded by the hard limit).
    public var fileLimit: UInt64 = 1 << 20
    /// Bytes of HTTP request bodies held in memory at once, over all uploads in progress; a request that would
    /// exceed it is answered 503 with `Retry-After` (each mount also limits its own bodies).
    public var maxBufferedBodyBytes = 80 << 20
    /// Percent of `maxBufferedBodyBytes` kept for media uploads: trackers' reports never hold more than the rest.
    public var uploadBodyReservePercent = 50
    /// Percent of `maxBufferedBodyBytes` kept for trackers' reports: uploads never hold more than the rest.
    public var ingestBodyReservePercent = 10
    /// Plain-HTTP connections one source address may hold open (0: no limit); a request on one more is answered 429
    /// and the connection closed. Loopback is not counted unless `httpPerAddressCountsLoopback`.
    public var httpConnectionsPerAddress = 64
    /// Count loopback peers against `httpConnectionsPerAddress` too (a hub whose clients all share this machine's
    /// address without a proxy in front, and tests); off by default, so a local reverse proxy is not limited.
    public var httpPerAddressCountsLoopback = false
    /// Seconds suggested in `Retry-After` when the body budget above is exhausted.
    public var busyRetryAfterSeconds = 5
    /// Seconds an admitted request body may take to arrive in full; a slower one is answered 408 and its share of
    /// the body budget given back.
    public var bodyTimeoutSeconds = 120
    /// PEM certificate chain; with `tlsPrivateKeyPath` it turns on TLS (wss:// and https://) on the one port.
    public var tlsCertificatePath: String?
    /// PEM private key of `tlsCertificatePath`.
    public var tlsPrivateKeyPath: String?
    /// The oldest TLS version accepted (default 1.2).
    public var tlsMinimumVersion = TLSMinimumVersion.tls12
    /// TLS 1.2 cipher suites in OpenSSL's syntax (default `modernCiphers`); TLS 1.3 keeps OpenSSL's suites.
    public var tlsCiphers = ServerConfiguration.modernCiphers
    /// Forward-secret AEAD suites only: ECDHE key exchange with AES-GCM or ChaCha20-Poly1305.
    public static let modernCiphers = "ECDHE+AESGCM:ECDHE+CHACHA20"
    /// libwebsockets log verbosity: 0 errors, 1 + warnings, 2 + notices, 3 + info.
    public var lwsLogVerbosity = 1
    /// When set, `GET /metrics` requires `Authorization: Bearer <this token>` and answers 401 without it.
    public var metricsToken: String?

    /// Whether the port speaks TLS (both the certificate and the key are set).
    public var usesTLS: Bool { tlsCertificatePath != nil && tlsPrivateKeyPath != nil }

    /// The defaults above.
    public init() {}
}
