import CairnHub
import CairnHubTestSupport
import CairnLoop
import CairnSocial
import Synchronization
import Testing

// Position snapshots: only changed positions are written, on the interval, and a failed flush is retried. With
// durable positions a `pos` is answered only once a snapshot has written it, and fixes arriving meanwhile share the
// next one.
@testable import CairnCore
@testable import CairnLiveMap

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct HubSnapshotTests {
    @Test func flushesChangedPositionsOnTheInterval() async throws {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        _ = try await h.user(2, "bob")
        h.move(1, lat: 1, lon: 1)
        h.clock.advance(by: 4_999)
        h.hub.tick()
        #expect(h.store.state.withLock { $0.flushes.isEmpty })
        h.clock.advance(by: 1)
        h.hub.tick()
        // Not one job: the tick also started the history purge, whose answer may come first (see `settle`).
        try await h.settle()
        let flushes = h.store.state.withLock { $0.flushes }
        try #require(flushes.count == 1)
        #expect(flushes[0].latest.map(\.userID) == [alice])
        // Nothing changed: no write at the next interval.
        h.clock.advance(by: 5_000)
        h.hub.tick()
        #expect(h.store.state.withLock { $0.flushes.count } == 1)
    }

    @Test func aLargeFlushIsCollectedAcrossLoopTurnsWhileTheLoopServes() async throws {
        let h = HubHarness()
        let now = h.clock.now()
        let total = LiveMap.flushChunk * 2 + 10
        for user in 1...Int64(total) { h.hub.liveMap.acceptFix(Fix(lat: 1, lon: 1, ts: now), for: user, now: now) }
        h.hub.flushPositionsNow()
        #expect(h.hub.liveMap.collecting != nil)  // one chunk done, the rest waits for later loop turns
        // The loop keeps serving meanwhile: a user already collected moves again.
        h.hub.liveMap.acceptFix(Fix(lat: 2, lon: 2, ts: now + 1), for: 1, now: now + 1)
        try await h.scheduler.run()  // second chunk
        try await h.scheduler.run()  // third chunk, then the write is started
        try await h.scheduler.run()  // the write completes
        let flushes = h.store.state.withLock { $0.flushes }
        #expect(flushes.count == 1)
        #expect(flushes.first?.latest.count == total)
        #expect(h.hub.liveMap.dirty == [1])  // the later move waits for the next flush
        #expect(h.hub.lastFlush?.rows == total)
    }

    @Test func failedFlushIsRetried() async throws {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        h.move(1, lat: 1, lon: 1)
        h.store.state.withLock { $0.failWrites = true }
        h.hub.flushPositionsNow()
        try await h.scheduler.run()
        #expect(h.hub.liveMap.dirty.contains(alice))
        h.store.state.withLock { $0.failWrites = false }
        h.hub.flushPositionsNow()
        try await h.scheduler.run()
        #expect(h.store.state.withLock { $0.positions[alice]?.lat } == 1)
        #expect(h.hub.liveMap.dirty.isEmpty)
    }

    @Test func shutdownFlushesBeforeItCompletes() async throws {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        h.move(1, lat: 2, lon: 2)
        var done = false
        h.hub.beginShutdown { done = true }
        #expect(!done)
        try await h.settle()  // the final flush and whatever else is in flight (not one job: see `settle`)
        #expect(done)
        #expect(h.store.state.withLock { $0.positions[alice]?.lat } == 2)
    }

    @Test func shutdownFinishesEvenIfTheFinalFlushFails() async throws {
        let h = HubHarness()
        _ = try await h.user(1, "alice")
        h.move(1, lat: 2, lon: 2)
        h.store.state.withLock { $0.failWrites = true }
        var done = false
        h.hub.beginShutdown { done = true }
        try await h.settle()
        #expect(done)
        #expect(h.store.state.withLock { $0.positions.isEmpty })
    }

    @Test func restoreBringsBackPositions() async throws {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        h.move(1, lat: 3, lon: 4)
        h.hub.flushPositionsNow()
        try await h.scheduler.run()
        let restored = HubHarness()
        restored.hub.restore(try h.store.loadSocial())
        #expect(restored.hub.liveMap.fixes[alice]?.lon == 4)
    }

    /// The replies on `connection` so far, by id.
    func replies(_ h: HubHarness, _ connection: ConnectionID) -> [Int: [String: Any]] {
        Dictionary(h.outbound.take(connection).compactMap { r in (r["id"] as? Int).map { ($0, r) } }) { a, _ in a }
    }

    @Test func durablePositionsAreAnsweredOnceWrittenAndShareTheNextSnapshot() async throws {
        let h = HubHarness { $0.durablePositions = true }
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        let second = Gate()  // bob's snapshot is held until the test has looked at the store
        h.store.state.withLock { $0.flushGate = (pass: 1, gate: second) }
        try await h.send(1, #"{"id":5,"op":"pos","lat":1,"lon":1}"#)
        #expect(replies(h, 1)[5] == nil)  // not before it is written
        #expect(h.hub.liveMap.isFlushing)  // a snapshot started at once, not at the interval
        try await h.send(2, #"{"id":6,"op":"pos","lat":2,"lon":2}"#)  // arrives while that one is written
        try await h.scheduler.run()  // the first write ends: alice is answered, bob's snapshot starts
        #expect(replies(h, 1)[5]?["ok"] as? Bool == true)
        #expect(h.store.state.withLock { $0.positions[alice]?.lat } == 1)
        #expect(replies(h, 2)[6] == nil && h.store.state.withLock { $0.positions[bob] } == nil)
        second.open()
        try await h.scheduler.run()
        #expect(replies(h, 2)[6]?["ok"] as? Bool == true)
        #expect(h.store.state.withLock { ($0.positions[bob]?.lat, $0.flushes.count) } == (2, 2))
    }

    @Test func aDurablePositionWhoseWriteFailsIsAnsweredWithAnError() async throws {
        let h = HubHarness { $0.durablePositions = true }
        let alice = try await h.user(1, "alice")
        h.store.state.withLock { $0.failWrites = true }
        try await h.send(1, #"{"id":5,"op":"pos","lat":1,"lon":1}"#)
        // A `pos` without an id has no answer to hold back: the connection's next request is not kept waiting.
        try await h.send(1, #"{"op":"pos","lat":1.5,"lon":1.5}"#)
        try await h.scheduler.run()
        let failed = replies(h, 1)[5]
        #expect(failed?["ok"] as? Bool == false && errorCode(failed ?? [:]) == "internal")
        #expect(h.hub.liveMap.dirty.contains(alice))  // kept for the next snapshot
        h.store.state.withLock { $0.failWrites = false }
        try await h.send(1, #"{"id":7,"op":"pos","lat":2,"lon":2}"#)
        try await h.scheduler.run()
        #expect(replies(h, 1)[7]?["ok"] as? Bool == true)
        #expect(h.store.state.withLock { $0.positions[alice]?.lat } == 2)
    }
}
