// Group commit: many small writes that arrive together share one transaction, so one fsync covers them all. With
// `synchronous = FULL` every commit waits for the disk, and trackers' reports are each a tiny write; committed one by
// one, the disk's sync time bounds how many reports a second the hub takes, and a slow sync holds every report queued
// behind it. Here a write waits only while the transaction before it is committing; then everything that arrived
// meanwhile is applied in arrival order in one transaction, and each caller hears its own outcome once it is on disk.
//
// A request's own refusal (a typed result of `apply`) affects only that request; an error thrown by `apply` or by the
// commit aborts the whole transaction, and every request in it fails with that error, nothing applied.
import GRDB
import Synchronization

/// Applies requests in shared transactions. Safe from any thread.
final class GroupCommit<Request: Sendable, Reply: Sendable>: Sendable {
    typealias Apply = @Sendable (Database, Request) throws -> Result<Reply, any Error>

    private struct Waiting: Sendable {
        var request: Request
        var continuation: CheckedContinuation<Result<Reply, any Error>, Never>
    }

    private struct Queue {
        var waiting: [Waiting] = []
        var committing = false
        var transactions = 0
    }

    private let pool: DatabasePool
    private let apply: Apply
    private let queue = Mutex(Queue())
    /// The most requests one transaction takes (a bound on how long one commit holds the writer).
    private let batchLimit: Int

    init(pool: DatabasePool, batchLimit: Int = 512, apply: @escaping Apply) {
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
                let outcomes = try await pool.write { db in try requests.map { try apply(db, $0) } }
                for (waiting, outcome) in zip(batch, outcomes) { waiting.continuation.resume(returning: outcome) }
            } catch {
                for waiting in batch { waiting.continuation.resume(returning: .failure(error)) }
            }
        }
    }
}
