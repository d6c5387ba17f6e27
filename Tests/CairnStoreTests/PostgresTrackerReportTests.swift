import CairnBuckets
// The PostgreSQL store's tracker reports written a batch at a time: reports of one batch, several of them for the
// same tracker, get the outcomes they would have had one by one in arrival order (the count of the last, a fix kept
// only when not older than the stored one, an inactive tracker's refusal its own), whatever the batch's shape.
import CairnCore
import CairnSQL
import CairnSessions
import CairnTestSupport
import CairnTrackers
import Foundation
import Testing

@testable import CairnPostgres

@Suite(.enabled(if: PostgresServerProcess.isAvailable, "PostgreSQL is not installed"), .timeLimit(.minutes(5)))
struct PostgresTrackerReportTests {
    @Test func aBatchWithSeveralReportsOfOneTrackerKeepsArrivalOrder() async throws {
        let store = try PostgresStore(url: try PostgresServerProcess.freshURL(), connections: 2)
        defer { store.close() }
        let owner = try await store.createUser(
            NewUser(username: "o", name: "O", passwordHash: nil, isGuest: false, createdAt: 1)
        ).id
        let bucket = try await store.createBucket(name: "B", privacy: .private, owner: owner, at: 1, limit: 10)
        var trackers: [Int64] = []
        for n in 0..<3 {
            let item = try await store.createItem(
                bucket: bucket.id, name: "i\(n)", note: nil, photo: nil, at: 1, limit: 10)
            let paired = try await store.pairTracker(item: item.id, device: "d\(n)", keyDigest: [UInt8(n)], at: 1)
            if n != 2 { _ = try await store.setTrackerActive(id: paired.id, active: true) }
            trackers.append(paired.id)
        }
        let (a, b, off) = (trackers[0], trackers[1], trackers[2])
        func report(_ tracker: Int64, _ ts: Int64?, _ count: Int) -> PostgresTrackerReport {
            PostgresTrackerReport(
                tracker: tracker, fix: ts.map { Fix(lat: Double($0), lon: 0, ts: $0) }, speedRejections: count)
        }
        let batch = [
            report(a, 100, 1), report(b, 10, 1), report(a, 50, 2), report(off, 5, 1), report(a, nil, 3),
            report(a, 100, 4), report(b, 20, 2), report(999, 1, 1),
        ]
        let outcomes = try await store.pool.write { db in
            try PostgresStore.applyTrackerReports(db, batch).map { outcome -> String in
                switch outcome {
                case .success(let stored): stored ? "stored" : "kept"
                case .failure(let error): error as? TrackerStoreError == .notActive ? "inactive" : "\(error)"
                }
            }
        }
        #expect(outcomes == ["stored", "stored", "kept", "inactive", "kept", "stored", "stored", "inactive"])
        #expect(try await store.trackerFix(tracker: a) == Fix(lat: 100, lon: 0, ts: 100))
        #expect(try await store.trackerFix(tracker: b) == Fix(lat: 20, lon: 0, ts: 20))
        #expect(try await store.trackerFix(tracker: off) == nil)
        #expect(try await store.trackerIngestState(keyDigest: [0], now: 0)?.speedRejections == 4)
        #expect(try await store.trackerIngestState(keyDigest: [1], now: 0)?.speedRejections == 2)
        #expect(try await store.trackerIngestState(keyDigest: [2], now: 0)?.speedRejections == 0)
    }

    /// A report whose write begins while an unshare of its tracker's pairer is in flight is refused, never stored
    /// after the unshare's answer: the write share-locks the pairer's membership, so it waits for the unshare, fails
    /// to serialize, and is run again, seeing the unshare.
    @Test func aReportWrittenWhileItsPairerIsUnsharedWaitsAndIsRefused() async throws {
        let url = try PostgresServerProcess.freshURL()
        let store = try PostgresStore(url: url, connections: 2)
        defer { store.close() }
        var users: [Int64] = []
        for name in ["anna", "bob"] {
            users.append(
                try await store.createUser(
                    NewUser(username: name, name: name, passwordHash: nil, isGuest: false, createdAt: 1)
                ).id)
        }
        let bucket = try await store.createBucket(name: "B", privacy: .private, owner: users[0], at: 1, limit: 10)
        _ = try await store.setMember(bucket: bucket.id, user: users[1], role: .owner)
        let item = try await store.createItem(bucket: bucket.id, name: "Bike", note: nil, photo: nil, at: 1, limit: 10)
        let tracker = try await store.pairTracker(item: item.id, device: "bobs", keyDigest: [1], by: users[1], at: 1)
        _ = try await store.setTrackerActive(id: tracker.id, active: true)

        let unshare = try PostgresConnection(url: url)
        _ = try unshare.execute("BEGIN")
        _ = try unshare.execute(
            "DELETE FROM bucket_members WHERE bucket_id = ? AND user_id = ?", [bucket.id, users[1]])
        let report = Task {
            try await store.recordTrackerIngest(
                tracker: tracker.id, fix: Fix(lat: 1, lon: 1, ts: 10), speedRejections: 0)
        }
        // The report's write is seen waiting for the unshare's lock (bounded: 10 s).
        let watcher = try PostgresConnection(url: url)
        var waiting = false
        for _ in 0..<10_000 where !waiting {
            let count = try watcher.scalar(
                "SELECT count(*) FROM pg_stat_activity "
                    + "WHERE wait_event_type = 'Lock' AND query LIKE '%FOR SHARE OF m%'",
                as: Int64.self)
            waiting = (count ?? 0) > 0
            if !waiting { try await Task.sleep(nanoseconds: 1_000_000) }
        }
        #expect(waiting, "the report's write did not wait for the unshare")
        _ = try unshare.execute("COMMIT")
        await #expect(throws: TrackerStoreError.notActive) { try await report.value }
        #expect(try await store.trackerFix(tracker: tracker.id) == nil)
    }
}
