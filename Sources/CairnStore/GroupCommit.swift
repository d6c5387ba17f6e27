// Group commit: many small writes that arrive together share one transaction, so one fsync covers them all. With
// `synchronous = FULL` every commit waits for the disk, and trackers' reports are each a tiny write; committed one by
// one, the disk's sync time bounds how many reports a second the hub takes, and a slow sync holds every report queued
// behind it. Here a write waits only while the transaction before it is committing; then everything that arrived
// meanwhile is applied in arrival order in one transaction, and each caller hears its own outcome once it is on disk.
//
// A request's own refusal (a typed result of `apply`) affects only that request; an error thrown by `apply` or by the
// commit aborts the whole transaction, and every request in it fails with that error, nothing applied.
import CairnSQL
import GRDB

/// Applies requests in shared SQLite transactions. Safe from any thread.
final class GroupCommit<Request: Sendable, Reply: Sendable>: Sendable {
    typealias Apply = @Sendable (Database, Request) throws -> Result<Reply, any Error>

    private let queue: GroupCommitQueue<Request, Reply>

    init(pool: DatabasePool, batchLimit: Int = 512, apply: @escaping Apply) {
        queue = GroupCommitQueue(batchLimit: batchLimit) { requests in
            try await pool.write { db in try requests.map { try apply(db, $0) } }
        }
    }

    /// Transactions begun so far (each covers one or more requests).
    var transactions: Int { queue.transactions }
    /// Requests waiting for the next transaction.
    var waiting: Int { queue.waiting }

    /// Applies `request` in the next transaction; its reply once that transaction is committed.
    func submit(_ request: Request) async throws -> Reply { try await queue.submit(request) }
}
