// Bulk work runs below the event loop: a thread that calls `BackgroundPriority.lowerCurrentThread` is nicer by the
// offset and leaves a real-time policy; the thread that calls nothing, and a thread it starts, keep their own.
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

    static func nice() -> Int32 { getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }

    static func policy() -> Int32 {
        var policy: Int32 = -1
        var parameters = sched_param()
        _ = pthread_getschedparam(pthread_self(), &policy, &parameters)
        return policy
    }

    @Test func aLoweredThreadIsNicerByTheOffsetAndNoOtherThreadIs() {
        let target = BackgroundPriority.niceness
        let mine = Self.nice()
        let (before, after, again) = Self.onNewThread { () -> (Int32, Int32, Int32) in
            let before = Self.nice()
            BackgroundPriority.lowerCurrentThread()
            let after = Self.nice()
            BackgroundPriority.lowerCurrentThread()  // a second call changes nothing
            return (before, after, Self.nice())
        }
        let process = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(getpid()))  // the main thread's
        #expect(target == min(19, process + BackgroundPriority.offset))
        #expect(after == max(target, before) && again == after)
        #expect(after > before || before >= target)
        #expect(Self.nice() == mine)  // the caller's own thread was not touched
        #expect(Self.onNewThread { Self.nice() } == mine)  // nor is a thread the caller starts
    }

    @Test(.enabled(if: geteuid() == 0, "setting a real-time policy needs root"))
    func aRealTimeThreadLeavesTheRealTimeClass() {
        let (set, after, nice) = Self.onNewThread { () -> (Bool, Int32, Int32) in
            var parameters = sched_param()
            parameters.sched_priority = 10
            let set = pthread_setschedparam(pthread_self(), Int32(SCHED_FIFO), &parameters) == 0
            BackgroundPriority.lowerCurrentThread()
            return (set, Self.policy(), Self.nice())
        }
        #expect(set)
        #expect(after == Int32(SCHED_OTHER))
        #expect(nice == BackgroundPriority.niceness)
    }
}
