// A task executor on one thread of its own, outside Swift's cooperative pool. A test that times how soon something
// answers must not also time the wait for a pool thread: the pool is only as wide as the machine has cores (two on
// CI), and synchronous tests of other suites, run in parallel, hold those threads while they block on sockets and
// processes, so a continuation resumed meanwhile would only run once one frees — seconds later on a busy machine.
// A task given this executor as its preference (`addTask(executorPreference:)`) runs and resumes here instead.
import Foundation

/// Runs the jobs of the tasks that prefer it, in order, on a dedicated thread that lives as long as the process.
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    /// Starts the executor's thread, named `name` (seen in a debugger or a crash report).
    public init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            condition.unlock()
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}
