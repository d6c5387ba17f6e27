// A few threads, each owning one libpq connection, taking jobs from one queue: the PostgreSQL counterpart of GRDB's
// pool, so the hub treats both stores alike (every store call is slow work that suspends its caller and never runs
// on the event loop). Reads run in a REPEATABLE READ, READ ONLY transaction, so a read of several statements sees one
// snapshot, as a GRDB read does. Writes run SERIALIZABLE: several nodes may write at once, and SERIALIZABLE gives
// the store's read-then-write transactions the meaning they have under SQLite's single writer; a transaction the
// server refuses as a serialization failure or deadlock is run again from the start (its body is only database work,
// so rerunning it is safe). A connection found broken (the server restarted) or closed after a timeout is made
// again before its next job. Nothing waits on the server without a bound (PostgresTimeouts): a request's job, queued
// or running, fails with `PostgresError.timeout` once `clientBound` has passed since it was queued, and after a
// reconnect failed the pool answers jobs at once with that failure for a second rather than queueing them behind
// another attempt, so a frozen server costs each request at most the bound and others much less.
import Foundation
public import Logging

/// A fixed pool of PostgreSQL connections on their own threads.
public final class PostgresPool: @unchecked Sendable {
    private typealias Job = (PostgresConnection?, (any Error)?) -> Void
    /// A job, when it was queued (monotonic seconds), and whether a request waits for it (bounded as a whole).
    private typealias Queued = (run: Job, queued: Double, bounded: Bool)

    private let condition = NSCondition()
    private var jobs: [Queued] = []
    /// Until when a connection that needs remaking fails its jobs at once (a reconnect failed), and why.
    private var retryAt: Double = 0
    private var lastFailure: (any Error)?
    private var head = 0
    private var stopping = false
    private var running = 0
    private let logger: Logger
    /// How many times a write transaction is attempted before a serialization failure is returned.
    public let attempts = 40
    /// The bounds on every wait.
    public let timeouts: PostgresTimeouts

    /// Opens `size` connections to `url` (failing at once if the server cannot be reached) and starts their threads.
    public init(
        url: String, size: Int, timeouts: PostgresTimeouts = .standard, logger: Logger = Logger(label: "cairn.postgres")
    ) throws {
        precondition(size > 0)
        self.logger = logger
        self.timeouts = timeouts
        var connections: [PostgresConnection] = []
        for _ in 0..<size { connections.append(try PostgresConnection(url: url, timeouts: timeouts)) }
        running = size
        for (index, connection) in connections.enumerated() {
            nonisolated(unsafe) let owned = connection
            let thread = Thread { [self] in work(owned) }
            thread.name = "cairn.postgres.\(index)"
            thread.start()
        }
    }

    /// Lets queued jobs finish, then closes every connection. Later calls fail.
    public func close() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while running > 0 { condition.wait() }
        condition.unlock()
    }

    // MARK: Reads and writes

    /// Runs `body` in a read-only snapshot, off the caller's thread.
    @discardableResult
    public func read<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await submit { try Self.inRead($0, body) }
    }

    /// Runs `body` in a serializable transaction, committed before this returns; retried on serialization failure.
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await submit { [attempts] in try Self.inWrite($0, attempts: attempts, body) }
    }

    /// Runs `body` on a pool connection outside any transaction (each statement commits on its own).
    @discardableResult
    public func withoutTransaction<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        try await submit(body)
    }

    /// The blocking read, for startup and maintenance (never on the event loop).
    @discardableResult
    public func read<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try wait { try Self.inRead($0, body) }
    }

    /// The blocking write, for startup and maintenance (never on the event loop).
    @discardableResult
    public func write<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try wait { [attempts] in try Self.inWrite($0, attempts: attempts, body) }
    }

    /// The blocking form of `withoutTransaction`.
    @discardableResult
    public func withoutTransaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try wait(body)
    }

    /// Begins a transaction. libpq learns that a connection died (the server restarted, a path dropped) only when it
    /// next uses it, so a BEGIN that fails for that reason, before anything of the transaction was sent, reconnects
    /// and begins once more.
    static func begin(_ db: PostgresConnection, _ statement: String) throws {
        do {
            try db.execute(statement)
        } catch PostgresError.connection(_) {
            try db.reset()
            try db.execute(statement)
        }
    }

    static func inRead<T>(_ db: PostgresConnection, _ body: (PostgresConnection) throws -> T) throws -> T {
        try begin(db, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        do {
            let value = try body(db)
            try db.execute("COMMIT")
            return value
        } catch {
            _ = try? db.execute("ROLLBACK")
            throw error
        }
    }

    static func inWrite<T>(
        _ db: PostgresConnection, attempts: Int, _ body: (PostgresConnection) throws -> T
    ) throws -> T {
        var attempt = 1
        while true {
            do {
                try begin(db, "BEGIN ISOLATION LEVEL SERIALIZABLE")
                let value = try body(db)
                try db.execute("COMMIT")
                return value
            } catch let error as PostgresError
                where
                (error.sqlState == PostgresError.serializationFailure
                || error.sqlState == PostgresError.deadlockDetected) && attempt < attempts
            {
                _ = try? db.execute("ROLLBACK")
                // Back off, doubling from 1 ms up to 64 ms, with full jitter, so the transactions that collided
                // (a hot row: one picture's likes) spread out instead of colliding again.
                let ceiling = UInt32(1000) << UInt32(min(attempt - 1, 6))
                usleep(UInt32.random(in: 0...ceiling) + 100)
                attempt += 1
            } catch {
                _ = try? db.execute("ROLLBACK")
                throw error
            }
        }
    }

    // MARK: The queue

    private func submit<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
            enqueue(bounded: true) { connection, failure in
                guard let connection else {
                    continuation.resume(throwing: failure ?? PostgresError.connection("the store is closed"))
                    return
                }
                continuation.resume(with: Result { try body(connection) })
            }
        }
    }

    private func wait<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try withoutActuallyEscaping(body) { body in
            let pending = Pending(body)
            let done = DispatchSemaphore(value: 0)
            enqueue(bounded: false) { connection, failure in
                pending.run(on: connection, failure: failure)
                done.signal()
            }
            done.wait()
            return try pending.outcome!.get()
        }
    }

    /// A blocking call's body and outcome. The body is dropped as soon as it has run, before the caller wakes, so
    /// it never outlives the call (the pool's thread may still hold the job that points here).
    private final class Pending<T>: @unchecked Sendable {
        private var body: ((PostgresConnection) throws -> T)?
        var outcome: Result<T, any Error>?

        init(_ body: @escaping (PostgresConnection) throws -> T) { self.body = body }

        func run(on connection: PostgresConnection?, failure: (any Error)?) {
            let body = self.body!
            self.body = nil
            if let connection {
                outcome = Result { try body(connection) }
            } else {
                outcome = .failure(failure ?? PostgresError.connection("the store is closed"))
            }
        }
    }

    private func enqueue(bounded: Bool, _ job: @escaping Job) {
        condition.lock()
        if stopping {
            condition.unlock()
            job(nil, PostgresError.connection("the store is closed"))
            return
        }
        jobs.append((job, PostgresTimeouts.now(), bounded))
        condition.signal()
        condition.unlock()
    }

    private func work(_ connection: PostgresConnection) {
        while true {
            condition.lock()
            while head == jobs.count && !stopping { condition.wait() }
            if head == jobs.count {
                running -= 1
                condition.broadcast()
                condition.unlock()
                return
            }
            let job = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            }
            condition.unlock()
            let deadline = job.bounded ? timeouts.clientBound.map { job.queued + $0 } : nil
            if let deadline, PostgresTimeouts.now() >= deadline {
                job.run(nil, PostgresError.timeout("the database did not take the request in time"))
                continue
            }
            connection.jobDeadline = deadline
            defer { connection.jobDeadline = nil }
            if connection.isHealthy {
                job.run(connection, nil)
            } else if let failure = recentFailure() {
                job.run(nil, failure)
            } else {
                do {
                    try connection.reset()
                    logger.info("PostgreSQL connection re-established")
                    job.run(connection, nil)
                } catch {
                    condition.withLock {
                        retryAt = PostgresTimeouts.now() + 1
                        lastFailure = error
                    }
                    job.run(nil, error)
                }
            }
        }
    }

    /// The failure of a reconnect made less than a second ago, if any.
    private func recentFailure() -> (any Error)? {
        condition.withLock { PostgresTimeouts.now() < retryAt ? lastFailure : nil }
    }
}
