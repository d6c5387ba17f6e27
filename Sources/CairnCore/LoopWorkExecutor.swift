// Where slow work's tasks run. `LoopWork` starts a task per store call or hash; on Swift's cooperative pool those
// tasks would share the pool's few threads (as many as the machine has cores) with everything else in the process,
// and one caller that blocks a pool thread — a synchronous library call, a test waiting on a socket — would delay
// every request's answer behind it. Given this executor as their preference, the tasks run and resume on threads of
// their own: serial dispatch queues, each with a thread of its own whatever the pool is doing, taken in turn.
import Dispatch
import Synchronization

/// Runs the jobs of the tasks that prefer it on a few serial queues of its own, outside the cooperative pool.
public final class LoopWorkExecutor: TaskExecutor, Sendable {
    private let queues: [DispatchQueue]
    private let next = Atomic<Int>(0)

    /// The executor `LoopWork` uses unless it is given another: one for the whole process.
    public static let shared = LoopWorkExecutor(threads: 2)

    /// Creates an executor over `threads` serial queues (at least one).
    public init(threads: Int, label: String = "cairn.loopwork") {
        queues = (0..<max(1, threads)).map { DispatchQueue(label: "\(label).\($0)") }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
        queues[index % queues.count].async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
