// Slow work, off the loop and back. Features hand store calls and hashing to `LoopWork`, which runs them in a Swift
// task on an executor of its own (`LoopWorkExecutor`, not the cooperative pool) and brings the result back through
// the `LoopScheduler`, so the callback that changes memory always runs on the loop — whether or not anyone still
// waits for the answer. It also counts what is in flight, which is what a
// shutdown waits for before the last snapshot is written and the store is closed.
public import CairnLoop
import Logging

/// Runs work off the loop and its continuation on the loop, counting what is in flight.
public final class LoopWork: @unchecked Sendable {
    // Confined to the loop thread (`inFlight`, `idle`); only `scheduler` is touched from tasks.
    private let scheduler: any LoopScheduler
    private let executor: LoopWorkExecutor
    /// The loop's confinement, asserted where work starts and ends.
    public let confinement: LoopConfinement
    private let logger = Logger(label: "cairn.hub.storage")
    /// Operations started and not yet finished.
    public private(set) var inFlight = 0
    /// Called on the loop each time the last operation in flight finishes.
    package var idle: (() -> Void)?

    /// Creates a runner whose tasks run on `executor` and return to the loop through `scheduler`.
    public init(
        scheduler: any LoopScheduler, confinement: LoopConfinement, executor: LoopWorkExecutor = .shared
    ) {
        self.scheduler = scheduler
        self.confinement = confinement
        self.executor = executor
    }

    /// Runs `work` off the loop, then `then` on the loop with its result.
    package func run<T: Sendable>(
        _ work: @escaping @Sendable () async throws(DomainError) -> T,
        then: @escaping (Result<T, DomainError>) -> Void
    ) {
        confinement.assertOnLoop()
        inFlight += 1
        let scheduler = self.scheduler
        // `then` runs on the loop only; it never crosses threads, it only travels with the job.
        nonisolated(unsafe) let then = then
        Task(executorPreference: executor) {
            let result: Result<T, DomainError>
            do throws(DomainError) { result = .success(try await work()) } catch { result = .failure(error) }
            scheduler.execute { self.finish { then(result) } }
        }
    }

    /// Runs store work whose failures are plain errors (snapshots, purges), then `then` on the loop.
    package func background<T: Sendable>(
        _ work: @escaping @Sendable () async throws -> T,
        then: @escaping (Result<T, any Error>) -> Void
    ) {
        confinement.assertOnLoop()
        inFlight += 1
        let scheduler = self.scheduler
        nonisolated(unsafe) let then = then
        Task(executorPreference: executor) {
            let result: Result<T, any Error>
            do { result = .success(try await work()) } catch { result = .failure(error) }
            scheduler.execute { self.finish { then(result) } }
        }
    }

    /// Runs `job` on the loop on a later turn (long work in chunks), counted as in flight until it runs.
    package func later(_ job: @escaping () -> Void) {
        inFlight += 1
        nonisolated(unsafe) let job = job
        scheduler.execute { self.finish(job) }
    }

    /// Counts work that is not a task (e.g. a collection spread over loop turns) as in flight.
    package func hold() { inFlight += 1 }

    /// Ends what `hold` counted.
    package func release() {
        inFlight -= 1
        if inFlight == 0 { idle?() }
    }

    private func finish(_ body: () -> Void) {
        confinement.assertOnLoop()
        inFlight -= 1
        body()
        if inFlight == 0 { idle?() }
    }

    /// Runs a store call, turning any storage error into `internal` (`unavailable` when the database was away); the
    /// detail is logged, not sent.
    package static func storage<T>(_ body: () async throws -> T) async throws(DomainError) -> T {
        do { return try await body() } catch {
            Logger(label: "cairn.hub.storage").error("storage failure: \(error)")
            throw DomainError.storage(error)
        }
    }
}
