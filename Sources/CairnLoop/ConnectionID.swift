// The one name every layer above the transport uses for a client connection. A plain integer, handed out by the
// transport and never reused in a process's lifetime, so a late completion for a closed connection can never reach
// a new one that happens to sit at the same socket.

/// Identifies one client connection for the lifetime of the process.
public typealias ConnectionID = UInt64
