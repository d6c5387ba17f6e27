// The ways a Redis call can fail, as values: callers decide whether to retry, degrade or ignore. Nothing here
// throws from a C callback; failures arrive through the same completion as replies.

/// Why a Redis command did not produce a reply.
public enum RedisError: Error, Equatable, Sendable {
    /// No connection now (Redis away, reconnect pending); the command was not sent.
    case unavailable
    /// The connection was lost after the command was sent and before its reply.
    case disconnected
    /// hiredis refused to queue the command (its text).
    case rejected(String)
    /// Redis answered with an error reply (its text, e.g. "WRONGTYPE ...").
    case server(String)
}
