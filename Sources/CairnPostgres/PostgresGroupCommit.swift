// Group commit in the shared store, as the SQLite store's `GroupCommit` does it: many small writes that arrive
// together share one transaction. Here the gain is round trips as much as the commit's flush: a write waits only while
// the transaction before it is committing; then everything that arrived meanwhile is handed to `apply` as one batch,
// in arrival order, inside one transaction (so `apply` can write the whole batch in a few statements), and each caller
// hears its own outcome once the transaction is committed.
//
// A request's own refusal (a typed result of `apply`) affects only that request; an error thrown by `apply` or by the
// commit aborts the whole transaction, and every request in it fails with that error, nothing applied. `apply` runs
// inside a SERIALIZABLE write the pool may rerun after a serialization failure: it must only do database work.
import Synchronization

/// Applies requests in shared transactions. Safe from any thread.
final class PostgresGroupCommit<Request: Sendable, Reply: Sendable>: Sendable {
    /// Applies a batch, in order; returns one outcome per request, in the same order.
    typealias Apply = @Sendable (PostgresConnection, [Request]) throws -> [Result<Reply, any Error>]

    private struct Waiting: Sendable {
        var request: Request
        var continuation: CheckedContinuation<Result<Reply, any Error>, Never>
    }

    private struct Queue {
        var waiting: [Waiting] = []
        var committing = false
        var transactions = 0
    }

    private let pool: PostgresPool
    private let apply: Apply
    private let queue = Mutex(Queue())
    /// The most requests one transaction takes (a bound on how long one commit holds its rows).
    private let batchLimit: Int

    init(pool: PostgresPool, batchLimit: Int = 512, apply: @escaping Apply) {
        self.pool = pool
        self.batchLimit = batchLimit
        self.apply = apply
    }

    /// Transactions begun so far (each covers one or more requests).
    var transactions: Int { queue.withLock { $0.transactions } }
    /// Requests waiting for the next transaction.
    var waiting: Int { queue.withLock { $0.waiting.count } }

    /// Applies `request` in the next transaction; its reply once that transaction is committed.
    func submit(_ request: Request) async throws -> Reply {
        let outcome = await withCheckedContinuation { continuation in
            let lead = queue.withLock { q in
                q.waiting.append(Waiting(request: request, continuation: continuation))
                guard !q.committing else { return false }
                q.committing = true
                return true
            }
            if lead { Task { await self.drain() } }
        }
        return try outcome.get()
    }

    /// Commits batches until nobody waits.
    private func drain() async {
        while true {
            let batch = queue.withLock { q -> [Waiting] in
                let n = min(q.waiting.count, batchLimit)
                let batch = Array(q.waiting.prefix(n))
                q.waiting.removeFirst(n)
                if batch.isEmpty { q.committing = false } else { q.transactions += 1 }
                return batch
            }
            guard !batch.isEmpty else { return }
            let apply = self.apply
            let requests = batch.map(\.request)
            do {
                let outcomes = try await pool.write { db in
                    let outcomes = try apply(db, requests)
                    precondition(outcomes.count == requests.count, "group commit: one outcome per request")
                    return outcomes
                }
                for (waiting, outcome) in zip(batch, outcomes) { waiting.continuation.resume(returning: outcome) }
            } catch {
                for waiting in batch { waiting.continuation.resume(returning: .failure(error)) }
            }
        }
    }
}
