// The PostgreSQL store's tracker reports written a batch at a time: reports of one batch, several of them for the
// same tracker, get the outcomes they would have had one by one in arrival order (the count of the last, a fix kept
// only when not older than the stored one, an inactive tracker's refusal its own), whatever the batch's shape.
import CairnDomain
import CairnTestSupport
import Foundation
import Testing

@testable import CairnPostgres

@Suite(.enabled(if: PostgresServerProcess.isAvailable, "PostgreSQL is not installed"))
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
}
