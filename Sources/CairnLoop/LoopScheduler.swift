// How slow work comes back to the thread that owns live state. Whatever runs off the loop (scrypt, SQLite, file
// I/O) reports its result by handing a closure to a `LoopScheduler`; the transport's implementation queues it and
// wakes the loop, tests' implementations queue it for the test thread to run.

/// Runs jobs on the thread that owns live state. `execute` may be called from any thread.
public protocol LoopScheduler: Sendable {
    /// Queues `job` to run on the loop thread.
    func execute(_ job: @escaping @Sendable () -> Void)
}
