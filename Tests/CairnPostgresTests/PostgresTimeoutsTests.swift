// A PostgreSQL server that stops answering (its processes SIGSTOPped: a stalled disk, a paused VM, a half-open path
// look the same to a client) must not hold the store's callers: every wait is bounded (PostgresTimeouts), the pool
// answers each caller within the bound with an outage error, drops the connections it cannot trust, and works again
// once the server does. Bounds are asserted as upper bounds with generous slack, never as speeds. The server is one of
// this suite's own, so no other test waits on it while it is frozen.
import CairnTestSupport
import Foundation
import Synchronization
import Testing

@testable import CairnPostgres

@Suite(
    .serialized, .enabled(if: PostgresServerProcess.isAvailable, "PostgreSQL is not installed"), .timeLimit(.minutes(5))
)
struct PostgresTimeoutsTests {
    static let server = Result { try PostgresServerProcess.dedicated() }
    /// A statement timeout of 1 s: the client gives up 3 s after a wait began.
    static let timeouts = PostgresTimeouts(statement: 1)
    /// What any machine needs beyond the bound to notice and answer (thread wake-ups, a loaded CI box).
    static let slack = 4.0
    /// Where the timed requests wait and resume: not the cooperative pool, which other suites' blocking tests may
    /// hold for seconds, so what is timed is the pool's answer, not the wait for a thread to hear it.
    static let timing = ThreadExecutor(name: "PostgresTimeoutsTests.timing")

    static func elapsed(since start: ContinuousClock.Instant) -> Double {
        let (seconds, attoseconds) = (ContinuousClock.now - start).components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    @Test func aFrozenServerFailsEveryQueuedRequestWithinTheBoundAndThePoolRecovers() async throws {
        // Every await below, the child tasks' included (they inherit the preference), resumes on `timing`.
        try await withTaskExecutorPreference(Self.timing) { try await frozenServerFailsQueuedRequests() }
    }

    private func frozenServerFailsQueuedRequests() async throws {
        let server = try Self.server.get()
        let pool = try PostgresPool(url: try server.freshURL(), size: 2, timeouts: Self.timeouts)
        defer { pool.close() }
        try await pool.write { db in try db.execute("CREATE TABLE t (n BIGINT)") }

        try server.pause()
        var resumed = false
        defer { if !resumed { try? server.resume() } }
        let start = ContinuousClock.now
        // Three times as many requests as connections: the queued ones are bounded as well as the running ones.
        let outcomes = await withTaskGroup(of: (Double, (any Error)?).self) { group in
            for n in 0..<6 {
                group.addTask {
                    do {
                        try await pool.write { db in try db.execute("INSERT INTO t VALUES (?)", [n]) }
                        return (Self.elapsed(since: start), nil)
                    } catch {
                        return (Self.elapsed(since: start), error)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let bound = try #require(Self.timeouts.clientBound)
        for (seconds, error) in outcomes {
            let failure = try #require(error as? PostgresError, "a write to a frozen server succeeded")
            #expect(failure.isOutage, "\(failure)")
            #expect(seconds < bound + Self.slack, "answered after \(seconds) s")
        }

        try server.resume()
        resumed = true
        // The pool replaces the connections it gave up on: for a second after a failed reconnect it answers at once
        // with that failure, then tries again, so a write succeeds within that second plus slack.
        let back = ContinuousClock.now
        while true {
            do {
                try await pool.write { db in try db.execute("INSERT INTO t VALUES (100)") }
                break
            } catch let error as PostgresError where error.isOutage && Self.elapsed(since: back) < 1 + Self.slack {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        // Nothing of the refused writes was applied.
        let rows = try await pool.read { db in try db.scalars("SELECT n FROM t ORDER BY n", as: Int.self) }
        #expect(rows == [100])
    }

    @Test func aTransactionCutOffHalfWayLeavesNothingBehind() async throws {
        let server = try Self.server.get()
        let pool = try PostgresPool(url: try server.freshURL(), size: 1, timeouts: Self.timeouts)
        defer { pool.close() }
        try await pool.write { db in try db.execute("CREATE TABLE t (n BIGINT)") }
        let paused = Mutex(false)
        defer { if paused.withLock({ $0 }) { try? server.resume() } }
        await #expect(throws: PostgresError.self) {
            try await pool.write { db in
                try db.execute("INSERT INTO t VALUES (1)")
                // The server freezes between two statements of the transaction: the second is never answered.
                try server.pause()
                paused.withLock { $0 = true }
                try db.execute("INSERT INTO t VALUES (2)")
            }
        }
        try server.resume()
        paused.withLock { $0 = false }
        let rows = try await pool.read { db in try db.scalars("SELECT n FROM t", as: Int.self) }
        #expect(rows == [])
    }

    @Test func connectingToAFrozenServerGivesUpWithinTheBound() throws {
        let server = try Self.server.get()
        let url = try server.freshURL()
        try server.pause()
        defer { try? server.resume() }
        let start = ContinuousClock.now
        #expect {
            _ = try PostgresConnection(url: url, timeouts: Self.timeouts)
        } throws: { error in
            (error as? PostgresError)?.isOutage == true
        }
        #expect(Self.elapsed(since: start) < Self.timeouts.clientBound! + Self.slack)
    }

    @Test func theServerEndsAStatementPastTheStatementTimeout() async throws {
        let server = try Self.server.get()
        let pool = try PostgresPool(url: try server.freshURL(), size: 1, timeouts: Self.timeouts)
        defer { pool.close() }
        do {
            try await pool.read { db in try db.execute("SELECT pg_sleep(30)") }
            Issue.record("a 30 s statement ran under a 1 s statement timeout")
        } catch let error as PostgresError {
            #expect(error.sqlState == "57014", "\(error)")  // query_canceled: the server's own timeout
            #expect(error.isOutage)
        }
        // The connection is still good: the server cancelled the statement, not the session.
        #expect(try await pool.read { db in try db.scalar("SELECT 1", as: Int.self) } == 1)
    }
}
