// Daily activity without the wire: a registered account noted several times a day is written once for that day,
// guests are never written, the day turns on the tick (a user noted again the next day is written for it), and a
// failed write is tried again on the next tick with nothing lost.
import CairnHub
import CairnHubTestSupport
import CairnLoop
import Synchronization
import Testing

@testable import CairnAdmin
@testable import CairnCore

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct ActivityLogTests {
    @Test func eachAccountIsWrittenOncePerDayAndGuestsNever() async throws {
        let h = DomainHarness()
        let log = ActivityLog(store: h.store, work: h.hub.work, now: h.clock.now())
        let alice = User(id: 1, username: "alice", name: "Alice", isGuest: false)
        let guest = User(id: 2, username: "guest-1", name: "Guest", isGuest: true)
        let day = DailyStatsRange.day(of: h.clock.now())
        log.note(alice)
        log.note(alice)
        log.note(guest)
        log.tick(now: h.clock.now())
        try await h.scheduler.run()
        #expect(h.store.state.withLock { $0.activity } == [[day, 1]])
        log.note(alice)
        log.tick(now: h.clock.now())
        #expect(h.scheduler.pending == 0)  // nothing new to write today

        h.clock.advance(by: 86_400_000)
        h.store.state.withLock { $0.failWrites = true }
        log.tick(now: h.clock.now())
        log.note(alice)
        log.tick(now: h.clock.now())
        try await h.scheduler.run()
        #expect(h.store.state.withLock { $0.activity.count } == 1)
        h.store.state.withLock { $0.failWrites = false }
        log.tick(now: h.clock.now())
        try await h.scheduler.run()
        #expect(h.store.state.withLock { $0.activity } == [[day, 1], [day + 1, 1]])
    }

    @Test func shuttingDownWritesWhatWasNotedWhileAWriteWasInFlight() async throws {
        let h = DomainHarness()
        let log = ActivityLog(store: h.store, work: h.hub.work, now: h.clock.now())
        let day = DailyStatsRange.day(of: h.clock.now())
        log.note(User(id: 1, username: "alice", name: "Alice", isGuest: false))
        log.tick(now: h.clock.now())  // alice's write starts
        log.note(User(id: 2, username: "bob", name: "Bob", isGuest: false))
        log.flushBeforeShutdown()  // a write is in flight: bob waits for it
        try await h.scheduler.run()  // alice's write ends, and bob's starts at once
        try await h.scheduler.run()
        #expect(h.store.state.withLock { $0.activity } == [[day, 1], [day, 2]])
        #expect(h.scheduler.pending == 0)
    }
}
