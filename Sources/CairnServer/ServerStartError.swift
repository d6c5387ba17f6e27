// Why the transport could not start listening, worded for an operator: what failed and what to look at. Raised by
// `TransportServer.start()` on the caller's thread once the service thread has tried.

/// Errors raised while starting the transport.
public enum ServerStartError: Error, CustomStringConvertible {
    /// libwebsockets could not create the context (typically: the port is in use or the address is invalid).
    case contextCreationFailed(host: String, port: Int)
    /// The same with TLS on: the certificate or key may also have been refused (lws logs which).
    case tlsContextCreationFailed(host: String, port: Int)
    /// libev could not create its loop (`server.event_loop = libev`).
    case eventLoopCreationFailed

    /// A readable explanation.
    public var description: String {
        switch self {
        case .contextCreationFailed(let host, let port):
            "cannot listen on \(host):\(port) (address in use or not available, or, with server.event_loop = "
                + "libev, the libwebsockets libev plugin could not be loaded: see the log line above)"
        case .tlsContextCreationFailed(let host, let port):
            "cannot listen on \(host):\(port) with TLS (address in use or not available, or the certificate or "
                + "key was refused, e.g. a key that does not match the certificate: see the log line above)"
        case .eventLoopCreationFailed:
            "cannot create the libev event loop (server.event_loop = libev); set server.event_loop = poll to use "
                + "libwebsockets' own loop"
        }
    }
}
