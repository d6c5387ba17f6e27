// Slow work shares the machine with the event loop, and where they share a core it takes the loop's time. A position
// snapshot of 10,000 fixes (tens of milliseconds of SQLite on the store's writer thread) ran in the middle of the
// deliveries and held them up to 80 ms every five seconds. So bulk work (the snapshot's transaction, password hashing)
// runs lowered: the kernel then runs the loop first whenever it has something to do and gives the bulk work the rest.
// The loop itself is never lowered.
//
// Bulk work runs on the dispatch pool, whose threads then run other work (a token check's read). So `whileLowered`
// puts the thread back afterwards. Lowering needs no privilege but raising back does (root, CAP_SYS_NICE, or an
// RLIMIT_NICE that allows it): without it the thread stays lowered, and what runs on it later runs lowered too.
#if canImport(Glibc)
import Glibc
#endif

/// Lowers the calling thread's scheduling priority below the event loop's.
public enum BackgroundPriority {
    /// How much nicer slow work is than the process (and its loop) started: under contention the kernel gives a
    /// thread about nine times the CPU of one 10 nicer, and wakes it ahead of it.
    public static let offset: Int32 = 10

    #if os(Linux)
    private static let which = __priority_which_t(PRIO_PROCESS.rawValue)

    private static func isRealTime(_ policy: Int32) -> Bool {
        policy == Int32(SCHED_FIFO) || policy == Int32(SCHED_RR)
    }
    #endif

    /// The nice value bulk work runs at: the main thread's (whose id is the process's, and from which the loop's
    /// thread is started) plus `offset`, at most 19. Not the caller's own: the dispatch pool gives its threads nice
    /// values of their own by quality of service.
    public static let niceness: Int32 = {
        #if os(Linux)
        errno = 0
        let base = getpriority(which, id_t(getpid()))
        return min(19, (errno == 0 ? base : 0) + offset)
        #else
        return offset
        #endif
    }()

    /// Runs `body` with the calling thread lowered, then puts its policy and nice value back where the process may.
    public static func whileLowered<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        #if os(Linux)
        let thread = pthread_self()
        var policy: Int32 = 0
        var parameters = sched_param()
        let hadPolicy = pthread_getschedparam(thread, &policy, &parameters) == 0
        errno = 0
        let nice = getpriority(which, 0)
        let hadNice = errno == 0
        lowerCurrentThread()
        defer {
            if hadPolicy && isRealTime(policy) {
                _ = pthread_setschedparam(thread, policy, &parameters)
            }
            if hadNice { _ = setpriority(which, 0, nice) }  // refused without the right to raise it: stays lowered
        }
        #endif
        return try body()
    }

    /// Lowers the calling thread: out of a real-time policy (a hub started under `chrt`) into the normal one, and to
    /// `niceness` unless it is already that low. Cheap once done (three system calls that change nothing).
    public static func lowerCurrentThread() {
        #if os(Linux)
        let thread = pthread_self()
        var policy: Int32 = 0
        var parameters = sched_param()
        if pthread_getschedparam(thread, &policy, &parameters) == 0, isRealTime(policy) {
            // A real-time hub (started under `chrt`): slow work leaves the real-time class altogether. The loop
            // preempts it the moment it wakes, and so do the kernel's own threads (softirq work deferred to
            // ksoftirqd is the network's), which the lowest real-time priority would still hold off.
            var normal = sched_param()
            normal.sched_priority = 0
            _ = pthread_setschedparam(thread, Int32(SCHED_OTHER), &normal)
        }
        // On Linux a nice value is a thread's own, and PRIO_PROCESS with 0 names the calling thread alone.
        let target = niceness
        errno = 0
        let current = getpriority(which, 0)
        if errno == 0 && current < target { _ = setpriority(which, 0, target) }
        #endif
    }
}
