// The per-tracker request budget of the ingest, over the memory store and a manual clock: a burst, then 429 with the
// wait until the next token; the budget refills with time and is per tracker; strangers (an unknown device, a wrong
// key) are refused alike and spend nothing of a device's budget; and the table forgets trackers that went quiet.
import CairnHubTestSupport
import Testing

@testable import CairnCore
@testable import CairnLiveMap
@testable import CairnTrackers

@Suite(.timeLimit(.minutes(5)))
struct IngestRateTests {
    @Test func aBurstThenRefusalsWithTheWaitUntilTheNextToken() {
        let rate = IngestRate(perSecond: 2, burst: 3)
        #expect(rate.take(1, now: 0) == nil)
        #expect(rate.take(1, now: 0) == nil)
        #expect(rate.take(1, now: 0) == nil)
        #expect(rate.take(1, now: 0) == 500)
        #expect(rate.take(1, now: 100) == 400)
        #expect(rate.take(2, now: 100) == nil)  // another tracker has its own budget
        #expect(rate.take(1, now: 500) == nil)  // a token back after 1/2 s
        #expect(rate.take(1, now: 500) == 500)
        #expect(IngestRate(perSecond: 0, burst: 1).take(1, now: 0) == nil)  // 0: no limit
    }

    @Test func trackersThatWentQuietAreForgotten() {
        let rate = IngestRate(perSecond: 1, burst: 2)
        for tracker in 0..<Int64(IngestRate.minimumSweep - 1) { #expect(rate.take(tracker, now: 0) == nil) }
        #expect(rate.tracked == IngestRate.minimumSweep - 1)
        // Two seconds later every one of them is full again: the next new tracker's request sweeps them away.
        #expect(rate.take(-1, now: 2000) == nil)
        #expect(rate.tracked == 1)
        // A tracker still spending stays.
        for tracker in 0..<Int64(IngestRate.minimumSweep - 1) { _ = rate.take(tracker, now: 2000) }
        #expect(rate.tracked == IngestRate.minimumSweep)
    }

    @Test func reportsAreLimitedPerTrackerAndStrangersAreRefusedAlikeWithoutSpendingIt() async throws {
        let rig = try await TrackerIngestTests.Rig()
        let ingest = TrackerIngest(
            store: rig.store, clock: rig.clock, filters: IngestFilters(), rate: (1, 2), committed: { _, _ in })
        func report(device: String = "dev-1", key: String = TrackerIngestTests.key, ts: Int64) async -> IngestRefusal? {
            let position = PositionReport(lat: 48.8566, lon: 2.3522, ts: ts)
            do throws(IngestRefusal) {
                try await ingest.report(TrackerReport(device: device, key: key, position: position))
                return nil
            } catch { return error }
        }
        // Strangers first, many times over: an unknown device and a known one with a wrong key get the same answer,
        // and neither spends the device's budget.
        let wrongKey = String(repeating: "B", count: 43)
        for n in 0..<5 {
            #expect(await report(key: wrongKey, ts: rig.at(-60) + Int64(n)) == .badCredentials)
            #expect(await report(device: "dev-2", key: wrongKey, ts: rig.at(-60) + Int64(n)) == .badCredentials)
        }
        #expect(await report(ts: rig.at(-50)) == nil)
        #expect(await report(ts: rig.at(-40)) == nil)
        #expect(await report(ts: rig.at(-30)) == .rateLimited(retryAfterMs: 1000))
        #expect(rig.stored?.ts == rig.at(-40))  // the refused report stored nothing
        #expect(ingest.counts.refused["rate_limited"] == 1)
        rig.clock.advance(by: 1000)
        #expect(await report(ts: rig.at(-20)) == nil)
        // An endpoint that spent the request's token from the headers does not spend another for its report.
        rig.clock.advance(by: 1000)
        let tracker = try #require(try await rig.store.tracker(id: rig.tracker))
        try ingest.spend(tracker)
        #expect(throws: IngestRefusal.rateLimited(retryAfterMs: 1000)) { try ingest.spend(tracker) }
        let position = PositionReport(lat: 48.8566, lon: 2.3522, ts: rig.at(-10))
        try await ingest.report(
            TrackerReport(device: "dev-1", key: TrackerIngestTests.key, position: position), spent: true)
        #expect(rig.stored?.ts == rig.at(-10))
    }
}
