// How long the store waits on PostgreSQL. The server ends a statement that runs longer than the statement timeout
// (`storage.statement_timeout`) by itself; a server that cannot answer at all (its process frozen, its disk stalled,
// the path half-open) cannot, so the client bounds every wait too, a grace period later, and closes the connection
// when it runs out. A request's job as a whole, from the moment it is queued, has the same bound.

import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The bounds on every wait on PostgreSQL.
public struct PostgresTimeouts: Sendable, Equatable {
    /// The server's statement timeout in seconds; 0 for none (then nothing is bounded).
    public var statement: Double

    /// What the client adds to the statement timeout before it gives up on the server: enough for the server's own
    /// cancellation to arrive first when it is merely slow.
    public static let grace: Double = 2

    /// The default: 10 s.
    public static let standard = PostgresTimeouts(statement: 10)

    /// No bound at all (operators' commands, which may legitimately run long).
    public static let none = PostgresTimeouts(statement: 0)

    /// Creates the bounds.
    public init(statement: Double) {
        self.statement = max(0, statement)
    }

    /// How long the client waits for a connection, for one statement's answer, and for a request's job as a whole
    /// (queueing included); nil when unbounded.
    public var clientBound: Double? { statement > 0 ? statement + Self.grace : nil }

    /// The statement timeout as PostgreSQL's setting reads it (milliseconds, 0 for none).
    var statementMilliseconds: Int { Int((statement * 1000).rounded()) }

    /// Monotonic seconds (the clock the deadlines are read on).
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
