import CairnErrorCodes
import CairnHubTestSupport
import CairnLoop
import Testing

// Slow work off the loop and back: what is in flight is counted until its continuation has run on the loop, and
// the idle hook fires when the last one finishes (what the shutdown drain waits for). No more than `maxTasks` tasks
// exist at once: the rest waits, in order, and nothing waiting is lost or counted out of flight.
@testable import CairnCore

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct LoopWorkTests {
    @Test func workIsCountedUntilItsContinuationRanAndIdleFiresAtZero() async throws {
        let scheduler = CollectingScheduler()
        let work = LoopWork(scheduler: scheduler, confinement: LoopConfinement(name: "test"))
        var idle = 0
        work.idle = { idle += 1 }
        var results: [Int] = []
        work.run({ () async throws(DomainError) -> Int in 1 }, then: { results.append((try? $0.get()) ?? -1) })
        work.run(
            { () async throws(DomainError) -> Int in throw DomainError.badRequest("no") },
            then: { if case .failure(let e) = $0 { results.append(e.code == .badRequest ? -2 : -3) } })
        #expect(work.inFlight == 2)
        try await scheduler.run(atLeast: 2)
        #expect(work.inFlight == 0)
        #expect(results.sorted() == [-2, 1])
        #expect(idle == 1)
    }

    @Test func noMoreThanMaxTasksExistAndTheRestStartInOrderAsTasksFinish() async throws {
        let scheduler = CollectingScheduler()
        let work = LoopWork(scheduler: scheduler, confinement: LoopConfinement(name: "test"), maxTasks: 2)
        var idle = 0
        work.idle = { idle += 1 }
        var results: [Int] = []
        for i in 0..<5 {
            work.run({ () async throws(DomainError) -> Int in i }, then: { results.append((try? $0.get()) ?? -1) })
        }
        work.background({ () async throws -> Int in 5 }, then: { results.append((try? $0.get()) ?? -1) })
        #expect(work.tasks == 2 && work.waitingCount == 4)
        #expect(work.inFlight == 6)  // waiting work counts: a shutdown waits for it too
        var rounds = 0
        while work.inFlight > 0 {
            try await scheduler.run()
            #expect(work.tasks <= 2)
            rounds += 1
        }
        #expect(rounds >= 3)  // two at a time: the six cannot all have come back in fewer rounds
        #expect(results.count == 6 && Set(results) == Set(0...5))
        // Each task is made when an earlier one has come back, so the first two answers are the first two started.
        #expect(Set(results.prefix(2)) == [0, 1])
        #expect(work.tasks == 0 && work.waitingCount == 0)
        #expect(idle == 1)
    }
}
