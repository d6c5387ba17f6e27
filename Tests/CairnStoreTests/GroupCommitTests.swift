import CairnBuckets
// Group commit: requests that arrive while a transaction commits share the next one, each caller hears its own reply
// once that transaction is committed, a request's own refusal leaves the others applied, and an error thrown inside
// the transaction fails every request in it with nothing applied. Then trackers' reports through the store, on both
// engines (the PostgreSQL store's own group commit is tested in CairnPostgresTests).
import CairnCore
import CairnSessions
import CairnTrackers
import Foundation
import GRDB
import Synchronization
import Testing

@testable import CairnStore

@Suite(.timeLimit(.minutes(5)))
struct GroupCommitTests {
    /// A pool with a table of numbers.
    func pool(_ dir: String) throws -> DatabasePool {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let pool = try DatabasePool(path: dir + "/g.sqlite")
        try pool.write { try $0.execute(sql: "CREATE TABLE n (v INTEGER PRIMARY KEY)") }
        return pool
    }

    struct Refused: Error, Equatable {}
    struct Broken: Error {}

    @Test func requestsArrivingDuringACommitShareTheNextTransaction() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pool = try pool(dir)
        let gate = DispatchSemaphore(value: 0)
        let commit = GroupCommit<Int, Int>(pool: pool) { db, v in
            if v == 0 { gate.wait() }  // the first transaction holds the writer until the others are queued
            if v == 5 { return .failure(Refused()) }
            try db.execute(sql: "INSERT INTO n (v) VALUES (?)", arguments: [v])
            return .success(v * 10)
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
        let stored = try await pool.read { try Int.fetchAll($0, sql: "SELECT v FROM n ORDER BY v") }
        #expect(stored == [0, 1, 2, 3, 4, 6, 7, 8, 9])
    }

    @Test func anErrorInsideTheTransactionFailsEveryRequestInItWithNothingApplied() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pool = try pool(dir)
        let gate = DispatchSemaphore(value: 0)
        let commit = GroupCommit<Int, Int>(pool: pool) { db, v in
            if v == 0 { gate.wait() }
            try db.execute(sql: "INSERT INTO n (v) VALUES (?)", arguments: [v])
            if v == 3 { throw Broken() }
            return .success(v)
        }
        let first = Task { try await commit.submit(0) }
        while commit.transactions < 1 { try await Task.sleep(for: .milliseconds(1)) }
        let rest = (1...4).map { v in Task { () -> Bool in (try? await commit.submit(v)) != nil } }
        while commit.waiting < 4 { try await Task.sleep(for: .milliseconds(1)) }
        gate.signal()
        #expect(try await first.value == 0)
        for task in rest { #expect(await task.value == false) }
        let stored = try await pool.read { try Int.fetchAll($0, sql: "SELECT v FROM n ORDER BY v") }
        #expect(stored == [0])
    }

    @Test(arguments: StoreEngine.available)
    func concurrentTrackerReportsAreAllStoredEachWithItsOwnOutcome(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            let owner = try await store.createUser(
                NewUser(username: "o", name: "O", passwordHash: "x", isGuest: false, createdAt: 1)
            ).id
            let bucket = try await store.createBucket(name: "B", privacy: .private, owner: owner, at: 1, limit: 10)
            var trackers: [TrackerRecord] = []
            for n in 0..<50 {
                let item = try await store.createItem(
                    bucket: bucket.id, name: "i\(n)", note: nil, photo: nil, at: 1, limit: 100)
                let paired = try await store.pairTracker(
                    item: item.id, device: "d\(n)", keyDigest: [UInt8](repeating: UInt8(n), count: 32), at: 1)
                if n != 7 { _ = try await store.setTrackerActive(id: paired.id, active: true) }
                trackers.append(paired)
            }
            let outcomes = await withTaskGroup(of: (Int, Bool?).self) { group in
                for (n, tracker) in trackers.enumerated() {
                    group.addTask {
                        let fix = Fix(lat: Double(n), lon: 1, ts: 1_000 + Int64(n))
                        return (
                            n, try? await store.recordTrackerIngest(tracker: tracker.id, fix: fix, speedRejections: 0)
                        )
                    }
                }
                var all: [Int: Bool?] = [:]
                for await (n, outcome) in group { all[n] = outcome }
                return all
            }
            for (n, tracker) in trackers.enumerated() {
                let stored = try await store.trackerFix(tracker: tracker.id)
                if n == 7 {
                    #expect(outcomes[n] == .some(nil) && stored == nil)  // inactive: refused, nothing stored
                } else {
                    #expect(outcomes[n] == .some(true) && stored?.lat == Double(n))
                }
            }
            #expect(store.trackerReportTransactions <= 50)
        }
    }
}
