// The pool's blocking calls (startup and maintenance) from many threads at once, each answered with its own result:
// the caller's closure is lent to a pool thread for one run only, so it does not outlive the call even while the
// thread that ran it, or the queue, still holds the job.
import CairnTestSupport
import Foundation
import Synchronization
import Testing

@testable import CairnPostgres

@Suite(.enabled(if: PostgresServerProcess.isAvailable, "PostgreSQL is not installed"), .timeLimit(.minutes(5)))
struct PostgresPoolBlockingTests {
    @Test func blockingCallsFromManyThreadsEachGetTheirOwnResult() throws {
        let pool = try PostgresPool(url: try PostgresServerProcess.freshURL(), size: 2)
        defer { pool.close() }
        let wrong = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 400) { n in
            let read = try? pool.read { db in try db.scalar("SELECT ?::bigint", [n], as: Int.self) }
            let written = try? pool.write { db in try db.scalar("SELECT ?::bigint + 1", [n], as: Int.self) }
            if read != n || written != n + 1 { wrong.withLock { $0.append(n) } }
        }
        #expect(wrong.withLock { $0 } == [])
    }
}
