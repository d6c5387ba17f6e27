// Bulk work runs below the event loop: a lowered thread is nicer by the offset and out of a real-time policy, the
// caller's own thread is untouched, a thread started by a lowered one is lowered too (which is why `whileLowered`
// puts its thread back), and `whileLowered` does put it back wherever the process may raise it again.
import Dispatch
import Foundation
import Glibc
import Synchronization
import Testing

@testable import CairnCore

@Suite(.timeLimit(.minutes(1)))
struct BackgroundPriorityTests {
    /// Runs `body` on a new thread and waits for its answer.
    static func onNewThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        let answer = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            answer.withLock { $0 = body() }
            done.signal()
        }
        thread.start()
        done.wait()
        return answer.withLock { $0! }
    }

    static let which = __priority_which_t(PRIO_PROCESS.rawValue)
    static func nice() -> Int32 { getpriority(which, 0) }

    static func policy() -> Int32 {
        var policy: Int32 = -1
        var parameters = sched_param()
        _ = pthread_getschedparam(pthread_self(), &policy, &parameters)
        return policy
    }

    static func setFIFO() -> Bool {
        var parameters = sched_param()
        parameters.sched_priority = 10
        return pthread_setschedparam(pthread_self(), Int32(SCHED_FIFO), &parameters) == 0
    }

    /// Whether this process may raise a thread's nice value back (root with CAP_SYS_NICE, or RLIMIT_NICE), tried on a
    /// thread of its own.
    static let mayRaise: Bool = onNewThread {
        let before = nice()
        return setpriority(which, 0, before + 1) == 0 && setpriority(which, 0, before) == 0
    }

    /// Whether this process may take a real-time policy (a container's root may lack CAP_SYS_NICE).
    static let mayUseRealTime: Bool = onNewThread { setFIFO() }

    @Test func aLoweredThreadIsNicerByTheOffsetAndNoOtherThreadIs() {
        let target = BackgroundPriority.niceness
        let mine = Self.nice()
        let (before, after, again, child) = Self.onNewThread { () -> (Int32, Int32, Int32, Int32) in
            let before = Self.nice()
            BackgroundPriority.lowerCurrentThread()
            let after = Self.nice()
            BackgroundPriority.lowerCurrentThread()  // a second call changes nothing
            return (before, after, Self.nice(), Self.onNewThread { Self.nice() })
        }
        let process = getpriority(Self.which, id_t(getpid()))  // the main thread's
        #expect(target == min(19, process + BackgroundPriority.offset))
        #expect(after == max(target, before) && again == after)
        #expect(after > before || before >= target)
        #expect(child == after)  // a thread started by a lowered thread starts lowered
        #expect(Self.nice() == mine)  // the caller's own thread was not touched
    }

    @Test func whileLoweredRunsBelowAndPutsTheThreadBackWhereTheProcessMay() throws {
        let target = BackgroundPriority.niceness
        let (before, inside, after) = Self.onNewThread { () -> (Int32, Int32, Int32) in
            let before = Self.nice()
            let inside = BackgroundPriority.whileLowered { Self.nice() }
            return (before, inside, Self.nice())
        }
        #expect(inside == max(target, before))
        #expect(after == (Self.mayRaise ? before : inside), "may raise: \(Self.mayRaise)")
        struct Refused: Error {}
        let thrown = Self.onNewThread { () -> Bool in
            do {
                try BackgroundPriority.whileLowered { () throws(Refused) in throw Refused() }
                return false
            } catch { return true }
        }
        #expect(thrown)  // the body's error comes out as it was
    }

    @Test(.enabled(if: BackgroundPriorityTests.mayUseRealTime, "this process may not take a real-time policy"))
    func aRealTimeThreadLeavesTheRealTimeClassAndComesBack() {
        let (set, inside, after, lowered) = Self.onNewThread { () -> (Bool, Int32, Int32, Int32) in
            let set = Self.setFIFO()
            let inside = BackgroundPriority.whileLowered { Self.policy() }
            let after = Self.policy()
            BackgroundPriority.lowerCurrentThread()
            return (set, inside, after, Self.policy())
        }
        #expect(set)
        #expect(inside == Int32(SCHED_OTHER))
        #expect(after == Int32(SCHED_FIFO))
        #expect(lowered == Int32(SCHED_OTHER))
    }
}
