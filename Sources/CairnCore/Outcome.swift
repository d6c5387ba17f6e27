// How an operation answers. A fast operation answers before it returns; a slow one (scrypt, SQLite) answers
// later, on the loop. Both go through one `Outcome` callback, so the protocol layer does not care which: it
// waits (holding the connection's later requests in order) until the callback runs, exactly once.
public import CairnLoop

/// Receives the result of an operation, on the loop thread, exactly once.
public typealias Outcome<T> = (Result<T, DomainError>) -> Void

/// Who is asking: the connection a request came on and the account bound to it.
public struct Caller: Sendable, Equatable {
    /// The connection.
    public let connection: ConnectionID
    /// The account (ops that need one are only called with one).
    public let user: User

    /// Creates the value.
    public init(connection: ConnectionID, user: User) {
        self.connection = connection
        self.user = user
    }
}
