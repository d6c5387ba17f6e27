// The queue behind group commit, whatever the engine: many small writes that arrive together share one transaction.
// A write waits only while the transaction before it is committing; then everything that arrived meanwhile (up to a
// bound) goes to `commit` as one batch, in arrival order, and each caller hears its own outcome once `commit` has
// returned, that is once the batch is durable. A request's own refusal (its `Result`) affects only that request; an
// error thrown by `commit` fails every request of its batch. The SQLite store (`GroupCommit`) and the PostgreSQL store
// (`PostgresGroupCommit`) each supply the transaction.
import Synchronization

/// Requests committed in shared batches. Safe from any thread.
public final class GroupCommitQueue<Request: Sendable, Reply: Sendable>: Sendable {
    /// Commits a batch in one transaction; returns one outcome per request, in the same order.
    public typealias Commit = @Sendable ([Request]) async throws -> [Result<Reply, any Error>]

    private struct Waiting: Sendable {
        var request: Request
        var continuation: CheckedContinuation<Result<Reply, any Error>, Never>
    }

    private struct Queue {
        var waiting: [Waiting] = []
        var committing = false
        var transactions = 0
    }

    private let commit: Commit
    private let queue = Mutex(Queue())
    /// The most requests one transaction takes (a bound on how long one commit holds the writer or its rows).
    private let batchLimit: Int

    /// A queue whose batches, of at most `batchLimit` requests, go to `commit`.
    public init(batchLimit: Int = 512, commit: @escaping Commit) {
        precondition(batchLimit > 0)
        self.batchLimit = batchLimit
        self.commit = commit
    }

    /// Transactions begun so far (each covers one or more requests).
    public var transactions: Int { queue.withLock { $0.transactions } }
    /// Requests waiting for the next transaction.
    public var waiting: Int { queue.withLock { $0.waiting.count } }

    /// Commits `request` in the next batch; its reply once that batch is committed.
    public func submit(_ request: Request) async throws -> Reply {
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
            do {
                let outcomes = try await commit(batch.map(\.request))
                precondition(outcomes.count == batch.count, "group commit: one outcome per request")
                for (waiting, outcome) in zip(batch, outcomes) { waiting.continuation.resume(returning: outcome) }
            } catch {
                for waiting in batch { waiting.continuation.resume(returning: .failure(error)) }
            }
        }
    }
}
