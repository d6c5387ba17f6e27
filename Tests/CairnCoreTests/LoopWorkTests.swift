import CairnErrorCodes
import CairnHubTestSupport
import CairnLoop
import Testing

// Slow work off the loop and back: what is in flight is counted until its continuation has run on the loop, and
// the idle hook fires when the last one finishes (what the shutdown drain waits for).
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
}
