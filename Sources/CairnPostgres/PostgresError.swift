// What can go wrong talking to PostgreSQL, typed: the server unreachable, a statement refused (with its SQLSTATE
// and, for a constraint, the constraint's name, which is how the store tells a taken username from a taken email),
// or a value that does not read as the type asked for.

public import CairnCore

/// An error from the PostgreSQL store's connection layer.
public enum PostgresError: StorageOutage, CustomStringConvertible, Sendable {
    /// No connection: the server cannot be reached or refused the login.
    case connection(String)
    /// The server did not answer within the client's bound (PostgresTimeouts); the connection was closed.
    case timeout(String)
    /// The server refused a statement. `sqlState` is the five-character code (`23505` unique violation, `40001`
    /// serialization failure, ...), `constraint` the violated constraint when there is one.
    case server(sqlState: String, message: String, constraint: String?)
    /// A column's value could not be read as the requested type.
    case decode(column: Int, value: String, type: String)

    /// Unique violation.
    public static let uniqueViolation = "23505"
    /// Serialization failure (a SERIALIZABLE transaction that must be retried).
    public static let serializationFailure = "40001"
    /// Deadlock detected (retried like a serialization failure).
    public static let deadlockDetected = "40P01"

    /// The SQLSTATE of a server error, nil for other errors.
    public var sqlState: String? {
        if case .server(let state, _, _) = self { return state }
        return nil
    }

    /// True when the database could not be reached or did not answer in time (nothing to do with the request):
    /// no connection, the client's bound ran out, the server's statement timeout or another cancellation (class
    /// 57), or a connection exception (class 08).
    public var isOutage: Bool {
        switch self {
        case .connection, .timeout: true
        case .server(let state, _, _): state.hasPrefix("57") || state.hasPrefix("08")
        case .decode: false
        }
    }

    /// True for a unique violation on the named constraint (or on any, when `constraint` is nil).
    public func isUniqueViolation(_ constraint: String? = nil) -> Bool {
        guard case .server(let state, _, let violated) = self, state == Self.uniqueViolation else { return false }
        return constraint == nil || violated == constraint
    }

    /// A readable explanation.
    public var description: String {
        switch self {
        case .connection(let message): "PostgreSQL connection: \(message)"
        case .timeout(let message): "PostgreSQL timeout: \(message)"
        case .server(let state, let message, _): "PostgreSQL \(state): \(message)"
        case .decode(let column, let value, let type): "PostgreSQL column \(column): '\(value)' is not a \(type)"
        }
    }
}
