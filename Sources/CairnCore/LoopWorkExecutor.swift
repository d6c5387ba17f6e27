// Where slow work's tasks run. `LoopWork` starts a task per store call or hash; on Swift's cooperative pool those
// tasks would share the pool's few threads (as many as the machine has cores) with everything else in the process,
// and one caller that blocks a pool thread — a synchronous library call, a test waiting on a socket — would delay
// every request's answer behind it. Given this executor as their preference, the tasks run and resume on threads of
// their own. The threads take jobs from one queue in order, so a long job (a places catalogue rebuilt for seconds)
// holds one thread while the others keep answering. They run at the loop's priority: they answer requests (a token
// check while a user connects), and lowered they left more handshakes waiting at once after a burst, each holding
// its header table (decision 0036). Bulk work lowers itself where it runs (`BackgroundPriority`).
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs the jobs of the tasks that prefer it on a few threads of its own, outside the cooperative pool, first in,
/// first out.
public final class LoopWorkExecutor: TaskExecutor, Sendable {
    private let jobs = Mutex(JobQueue())
    private let waiting = DispatchSemaphore(value: 0)

    /// The executor `LoopWork` uses unless it is given another, one for the whole process: as many threads as the
    /// machine has cores, at least two (the jobs mostly wait on the database; a few compute).
    public static let shared = LoopWorkExecutor(threads: max(2, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))

    /// Starts `threads` threads (at least one), which live as long as the process.
    public init(threads: Int, label: String = "cairn.loopwork") {
        for index in 0..<max(1, threads) {
            // A serial queue always has a thread of its own to run on; this one never returns, so the thread is
            // the executor's for good.
            DispatchQueue(label: "\(label).\(index)").async { [self] in serve() }
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.push(job) }
        waiting.signal()
    }

    private func serve() -> Never {
        while true {
            waiting.wait()
            let job = jobs.withLock { $0.pop() }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// Jobs first in, first out: taken from the front by an index, the taken ones dropped in bulk now and then.
private struct JobQueue: ~Copyable {
    private var jobs: [UnownedJob] = []
    private var head = 0

    mutating func push(_ job: UnownedJob) { jobs.append(job) }

    /// The oldest job; only called once the semaphore says there is one.
    mutating func pop() -> UnownedJob {
        let job = jobs[head]
        head += 1
        if head == jobs.count {
            jobs.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024, head * 2 >= jobs.count {
            jobs.removeFirst(head)
            head = 0
        }
        return job
    }
}
