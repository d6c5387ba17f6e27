import CairnLoop
import Dispatch
import Foundation
import Synchronization
import Testing

// Slow work runs on threads of its own: with every thread of Swift's cooperative pool blocked (a synchronous caller
// waiting on a socket, say), a store call handed to `LoopWork` still runs and its answer still reaches the loop.
@testable import CairnCore

@Suite(.timeLimit(.minutes(5)))
struct LoopWorkExecutorTests {
    /// Hands each job to the test's thread, which plays the loop.
    final class HandingScheduler: LoopScheduler, Sendable {
        let jobs = Mutex<[@Sendable () -> Void]>([])
        let arrived = DispatchSemaphore(value: 0)
        func execute(_ job: @escaping @Sendable () -> Void) {
            jobs.withLock { $0.append(job) }
            arrived.signal()
        }
    }

    @Test func workStillRunsAndAnswersWhileEveryCooperativeThreadIsBlocked() async throws {
        // The test waits on a thread of its own, so that it can block while the pool is blocked.
        let waiter = LoopWorkExecutor(threads: 1, label: "LoopWorkExecutorTests.waiter")
        try await withTaskExecutorPreference(waiter) {
            let width = ProcessInfo.processInfo.activeProcessorCount
            let started = DispatchSemaphore(value: 0)
            let gate = DispatchSemaphore(value: 0)
            for _ in 0..<width {
                Task.detached {
                    started.signal()
                    gate.wait()
                }
            }
            defer { for _ in 0..<width { gate.signal() } }
            for _ in 0..<width {
                try #require(started.wait(timeout: .now() + 60) == .success, "the pool's threads were all taken")
            }

            let scheduler = HandingScheduler()
            let work = LoopWork(scheduler: scheduler, confinement: LoopConfinement(name: "test"))
            let answer = Mutex<Int?>(nil)
            work.run(
                { () async throws(DomainError) -> Int in 7 },
                then: { result in
                    answer.withLock { $0 = try? result.get() }
                })
            #expect(work.inFlight == 1)
            let came = scheduler.arrived.wait(timeout: .now() + 30)
            #expect(came == .success, "the work's answer did not reach the loop while the pool was blocked")
            for job in scheduler.jobs.withLock({ $0 }) { job() }
            #expect(answer.withLock { $0 } == 7)
            #expect(work.inFlight == 0)
        }
    }

    @Test func aLongJobHoldsOneThreadWhileTheOthersKeepAnswering() async throws {
        let waiter = LoopWorkExecutor(threads: 1, label: "LoopWorkExecutorTests.waiter2")
        try await withTaskExecutorPreference(waiter) {
            let executor = LoopWorkExecutor(threads: 2, label: "LoopWorkExecutorTests.two")
            let longStarted = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            defer { release.signal() }
            Task(executorPreference: executor) {
                longStarted.signal()
                release.wait()
            }
            try #require(longStarted.wait(timeout: .now() + 60) == .success, "the long job never started")
            // Each short job is queued while the long one holds a thread; every one must run on the other.
            let done = DispatchSemaphore(value: 0)
            for _ in 0..<6 { Task(executorPreference: executor) { done.signal() } }
            for index in 0..<6 {
                let came = done.wait(timeout: .now() + 30)
                #expect(came == .success, "short job \(index + 1) of 6 waited behind the long one")
            }
        }
    }
}
