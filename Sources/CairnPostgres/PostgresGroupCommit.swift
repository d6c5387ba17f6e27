// Group commit in the shared store, as the SQLite store's `GroupCommit` does it: many small writes that arrive
// together share one transaction. Here the gain is round trips as much as the commit's flush: a write waits only while
// the transaction before it is committing; then everything that arrived meanwhile is handed to `apply` as one batch,
// in arrival order, inside one transaction (so `apply` can write the whole batch in a few statements), and each caller
// hears its own outcome once the transaction is committed.
//
// A request's own refusal (a typed result of `apply`) affects only that request; an error thrown by `apply` or by the
// commit aborts the whole transaction, and every request in it fails with that error, nothing applied. `apply` runs
// inside a SERIALIZABLE write the pool may rerun after a serialization failure: it must only do database work.
import CairnSQL

/// Applies requests in shared PostgreSQL transactions. Safe from any thread.
final class PostgresGroupCommit<Request: Sendable, Reply: Sendable>: Sendable {
    /// Applies a batch, in order; returns one outcome per request, in the same order.
    typealias Apply = @Sendable (PostgresConnection, [Request]) throws -> [Result<Reply, any Error>]

    private let queue: GroupCommitQueue<Request, Reply>

    init(pool: PostgresPool, batchLimit: Int = 512, apply: @escaping Apply) {
        queue = GroupCommitQueue(batchLimit: batchLimit) { requests in
            try await pool.write { db in try apply(db, requests) }
        }
    }

    /// Transactions begun so far (each covers one or more requests).
    var transactions: Int { queue.transactions }
    /// Requests waiting for the next transaction.
    var waiting: Int { queue.waiting }

    /// Applies `request` in the next transaction; its reply once that transaction is committed.
    func submit(_ request: Request) async throws -> Reply { try await queue.submit(request) }
}
