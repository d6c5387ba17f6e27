// The shared store's group commit against a real server: requests that arrive while a transaction commits are handed
// to the next one as one batch, each caller hears its own reply once that transaction is committed, a request's own
// refusal leaves the others applied, and an error thrown inside the transaction fails every request in it with
// nothing applied.
import CairnTestSupport
import Foundation
import Synchronization
import Testing

@testable import CairnPostgres

@Suite(.enabled(if: PostgresServerProcess.isAvailable, "PostgreSQL is not installed"), .timeLimit(.minutes(5)))
struct PostgresGroupCommitTests {
    /// A pool with a table of numbers.
    func pool() throws -> PostgresPool {
        let pool = try PostgresPool(url: try PostgresServerProcess.freshURL(), size: 2)
        try pool.write { db in try db.execute("CREATE TABLE n (v BIGINT PRIMARY KEY)") }
        return pool
    }

    struct Refused: Error, Equatable {}
    struct Broken: Error {}

    @Test func requestsArrivingDuringACommitShareTheNextTransaction() async throws {
        let pool = try pool()
        defer { pool.close() }
        let gate = DispatchSemaphore(value: 0)
        let batches = Mutex<[[Int]]>([])
        let commit = PostgresGroupCommit<Int, Int>(pool: pool) { db, values in
            batches.withLock { $0.append(values) }
            if values == [0] { gate.wait() }  // the first transaction is held until the others are queued
            let inserted = values.filter { $0 != 5 }
            try db.execute(
                "INSERT INTO n (v) SELECT unnest(?::bigint[])", [PostgresIntArray(inserted.map(Int64.init))])
            return values.map { $0 == 5 ? .failure(Refused()) : .success($0 * 10) }
        }
        let first = Task { try await commit.submit(0) }
        while commit.transactions < 1 { try await Task.sleep(for: .milliseconds(1)) }
        let rest = (1...9).map { v in
            Task { () -> Result<Int, any Error> in
                do { return .success(try await commit.submit(v)) } catch { return .failure(error) }
            }
        }
        while commit.waiting < 9 { try await Task.sleep(for: .milliseconds(1)) }
        gate.signal()
        #expect(try await first.value == 0)
        for (v, task) in zip(1...9, rest) {
            switch await task.value {
            case .success(let reply): #expect(v != 5 && reply == v * 10)
            case .failure(let error): #expect(v == 5 && error is Refused)
            }
        }
        #expect(commit.transactions == 2)
        // The second transaction had the nine, in one batch.
        #expect(batches.withLock { $0.map { $0.sorted() } } == [[0], Array(1...9)])
        let stored = try await pool.read { db in try db.scalars("SELECT v FROM n ORDER BY v", as: Int.self) }
        #expect(stored == [0, 1, 2, 3, 4, 6, 7, 8, 9])
    }

    @Test func anErrorInsideTheTransactionFailsEveryRequestInItWithNothingApplied() async throws {
        let pool = try pool()
        defer { pool.close() }
        let gate = DispatchSemaphore(value: 0)
        let commit = PostgresGroupCommit<Int, Int>(pool: pool) { db, values in
            if values == [0] { gate.wait() }
            try db.execute("INSERT INTO n (v) SELECT unnest(?::bigint[])", [PostgresIntArray(values.map(Int64.init))])
            if values.contains(3) { throw Broken() }
            return values.map { .success($0) }
        }
        let first = Task { try await commit.submit(0) }
        while commit.transactions < 1 { try await Task.sleep(for: .milliseconds(1)) }
        let rest = (1...4).map { v in Task { () -> Bool in (try? await commit.submit(v)) != nil } }
        while commit.waiting < 4 { try await Task.sleep(for: .milliseconds(1)) }
        gate.signal()
        #expect(try await first.value == 0)
        for task in rest { #expect(await task.value == false) }
        let stored = try await pool.read { db in try db.scalars("SELECT v FROM n ORDER BY v", as: Int.self) }
        #expect(stored == [0])
    }
}
