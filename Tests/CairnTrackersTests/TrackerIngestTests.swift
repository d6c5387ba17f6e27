// The ingest's filters over the memory store and a manual clock: each filter drops what it should when on and lets it
// through when off; a dropped fix is answered like a stored one (no refusal) and counted; the speed filter
// re-anchors after N rejections in a row or a long gap, and its count is kept in the store across a restart; a batch
// is judged oldest first, keeps its newest accepted fix as the latest and may have fixes dropped and others stored;
// one malformed position refuses the whole report with nothing applied.
import CairnBuckets
import CairnHubTestSupport
import Synchronization
import Testing

@testable import CairnCore
@testable import CairnLiveMap
@testable import CairnSessions
@testable import CairnTrackers

@Suite(.timeLimit(.minutes(5)))
struct TrackerIngestTests {
    static let key = String(repeating: "A", count: 43)
    static let paris = (lat: 48.8566, lon: 2.3522)
    static let tokyo = (lat: 35.6762, lon: 139.6503)

    /// The fixes an ingest handed on as committed.
    final class Committed: Sendable {
        private let fixes = Mutex<[Fix]>([])
        func append(_ fix: Fix) { fixes.withLock { $0.append(fix) } }
        var all: [Fix] { fixes.withLock { $0 } }
    }

    /// A paired, active tracker on device "dev-1" and an ingest over it.
    final class Rig {
        let clock = ManualClock()
        let store: MemoryTrackerStore
        let items = MemoryBucketStore()
        let accounts = MemoryAccountStore()
        let bucket: Int64
        let tracker: Int64
        let committed = Committed()
        var ingest: TrackerIngest!

        init(_ configure: (inout IngestFilters) -> Void = { _ in }) async throws {
            let created = try await items.createBucket(name: "Gear", privacy: .private, owner: 1, at: 1)
            bucket = created.id
            let item = try await items.createItem(bucket: bucket, name: "Bike", note: nil, photo: nil, at: 2)
            store = MemoryTrackerStore(items: items, accounts: accounts)
            let digest = try #require(Trackers.keyDigest(TrackerIngestTests.key))
            tracker = try await store.pairTracker(item: item.id, device: "dev-1", keyDigest: digest, at: 3).id
            _ = try await store.setTrackerActive(id: tracker, active: true)
            var filters = IngestFilters()
            configure(&filters)
            ingest = restarted(filters)
        }

        /// A new ingest over the same store, as after a restart.
        func restarted(_ filters: IngestFilters) -> TrackerIngest {
            let committed = self.committed
            return TrackerIngest(
                store: store, clock: clock, filters: filters,
                committed: { _, fix in committed.append(fix) })
        }

        /// `seconds` after the clock's start.
        func at(_ seconds: Int64) -> Int64 { clock.now() + seconds * 1000 }

        func send(
            _ positions: [PositionReport], invalid: Set<Int> = [], via other: TrackerIngest? = nil
        ) async throws(IngestRefusal) -> IngestReceipt {
            var report = TrackerReport(device: "dev-1", key: TrackerIngestTests.key, positions: positions)
            report.markedInvalid = invalid
            return try await (other ?? ingest).report(report)
        }

        func send(
            lat: Double, lon: Double, acc: Double? = nil, ts: Int64
        ) async throws(IngestRefusal) -> IngestVerdict {
            let receipt = try await send([PositionReport(lat: lat, lon: lon, acc: acc, ts: ts)])
            return receipt.verdicts[0]
        }

        var stored: Fix? { store.state.withLock { $0.fixes[tracker] } }
        var rejections: Int { store.state.withLock { $0.speedRejections[tracker] ?? 0 } }
        var counts: IngestCounts { ingest.counts }
    }

    @Test func zeroIsDroppedAndAnswered() async throws {
        let rig = try await Rig()
        #expect(try await rig.send(lat: 0, lon: 0, ts: rig.at(-10)) == .dropped(.zero))
        #expect(rig.stored == nil)
        #expect(rig.committed.all.isEmpty)
        #expect(rig.counts.dropped == [.zero: 1])
        #expect(rig.counts.stored == 0)
        // Only both at zero: the equator and the prime meridian are places.
        #expect(try await rig.send(lat: 0, lon: 2, ts: rig.at(-5)) == .accepted(nil))
        #expect(rig.stored?.lon == 2)

        let off = try await Rig { $0.zero = false }
        #expect(try await off.send(lat: 0, lon: 0, ts: off.at(-10)) == .accepted(nil))
        #expect(off.stored?.ts == off.at(-10))
        #expect(off.counts.dropped.isEmpty && off.counts.stored == 1)
    }

    @Test func theFutureBoundDropsAFixTooFarAhead() async throws {
        let rig = try await Rig { $0.futureMs = 60_000 }
        #expect(try await rig.send(lat: 1, lon: 1, ts: rig.at(61)) == .dropped(.future))
        #expect(rig.stored == nil)
        #expect(try await rig.send(lat: 1, lon: 1, ts: rig.at(59)) == .accepted(nil))
        #expect(rig.stored?.ts == rig.at(59))
        #expect(rig.counts.dropped == [.future: 1])
        // The default bound is five minutes.
        let defaults = try await Rig()
        #expect(try await defaults.send(lat: 1, lon: 1, ts: defaults.at(301)) == .dropped(.future))
        #expect(try await defaults.send(lat: 1, lon: 1, ts: defaults.at(299)) == .accepted(nil))
    }

    @Test func aDuplicateTimeIsDroppedUnlessTheFilterIsOff() async throws {
        let rig = try await Rig()
        #expect(try await rig.send(lat: 1, lon: 1, ts: rig.at(-60)) == .accepted(nil))
        #expect(try await rig.send(lat: 1.001, lon: 1, ts: rig.at(-60)) == .dropped(.duplicate))
        #expect(rig.stored?.lat == 1)
        #expect(rig.counts.dropped == [.duplicate: 1])

        let off = try await Rig { $0.duplicate = false }
        _ = try await off.send(lat: 1, lon: 1, ts: off.at(-60))
        #expect(try await off.send(lat: 1.001, lon: 1, ts: off.at(-60)) == .accepted(nil))
        #expect(off.stored?.lat == 1.001)
    }

    @Test func accuracyWorseThanTheBoundIsDropped() async throws {
        let rig = try await Rig { $0.maxAccuracy = 100 }
        #expect(try await rig.send(lat: 1, lon: 1, acc: 150, ts: rig.at(-30)) == .dropped(.accuracy))
        #expect(rig.stored == nil)
        #expect(try await rig.send(lat: 1, lon: 1, acc: 100, ts: rig.at(-20)) == .accepted(nil))
        #expect(try await rig.send(lat: 1, lon: 1, ts: rig.at(-10)) == .accepted(nil))  // no accuracy: kept
        #expect(rig.counts.dropped == [.accuracy: 1])
        // Off by default.
        let off = try await Rig()
        #expect(try await off.send(lat: 1, lon: 1, acc: 50_000, ts: off.at(-30)) == .accepted(nil))
        #expect(off.stored?.acc == 50_000)
    }

    @Test func aFixTheDeviceMarksInvalidIsDropped() async throws {
        let rig = try await Rig()
        let r = try await rig.send([PositionReport(lat: 5, lon: 5, ts: rig.at(-10))], invalid: [0])
        #expect(r.verdicts == [.dropped(.invalid)])
        #expect(r.latest == nil && rig.stored == nil)
        #expect(rig.counts.dropped == [.invalid: 1])

        let off = try await Rig { $0.invalid = false }
        let kept = try await off.send([PositionReport(lat: 5, lon: 5, ts: off.at(-10))], invalid: [0])
        #expect(kept.verdicts == [.accepted(nil)])
        #expect(off.stored?.lat == 5)
    }

    @Test func theMinimumPeriodCountsFromTheLastAcceptedFix() async throws {
        let rig = try await Rig { $0.minPeriodMs = 30_000 }
        #expect(try await rig.send(lat: 1, lon: 1, ts: rig.at(-100)) == .accepted(nil))
        #expect(try await rig.send(lat: 1, lon: 1, ts: rig.at(-90)) == .dropped(.period))
        #expect(try await rig.send(lat: 1, lon: 1, ts: rig.at(-75)) == .dropped(.period))  // 25 s after -100
        #expect(try await rig.send(lat: 1, lon: 1, ts: rig.at(-70)) == .accepted(nil))  // 30 s after -100
        #expect(rig.stored?.ts == rig.at(-70))
        #expect(rig.counts.dropped == [.period: 2])
        // Off by default.
        let off = try await Rig()
        _ = try await off.send(lat: 1, lon: 1, ts: off.at(-100))
        #expect(try await off.send(lat: 1, lon: 1, ts: off.at(-99)) == .accepted(nil))
    }

    @Test func anImpossibleJumpIsDroppedUntilNRejectionsReanchor() async throws {
        let rig = try await Rig()  // 350 m/s, re-anchor after 3
        let (p, t) = (Self.paris, Self.tokyo)
        #expect(try await rig.send(lat: p.lat, lon: p.lon, ts: rig.at(-600)) == .accepted(nil))
        // A minute later in Tokyo: three times dropped, the count kept in the store.
        for (n, s) in [Int64(-540), -480, -420].enumerated() {
            #expect(try await rig.send(lat: t.lat, lon: t.lon, ts: rig.at(s)) == .dropped(.speed))
            #expect(rig.rejections == n + 1)
            #expect(rig.stored?.lat == p.lat)
        }
        // The fourth is taken as the new anchor, and the next one is judged from there.
        #expect(try await rig.send(lat: t.lat, lon: t.lon, ts: rig.at(-360)) == .accepted(.count))
        #expect(rig.stored?.lat == t.lat)
        #expect(rig.rejections == 0)
        #expect(try await rig.send(lat: t.lat + 0.001, lon: t.lon, ts: rig.at(-300)) == .accepted(nil))
        #expect(try await rig.send(lat: p.lat, lon: p.lon, ts: rig.at(-240)) == .dropped(.speed))
        #expect(rig.counts.dropped == [.speed: 4])
        #expect(rig.counts.reanchors == [.count: 1])
        #expect(rig.counts.stored == 3)
    }

    @Test func aPlausibleFixBetweenRejectionsStartsTheCountOver() async throws {
        let rig = try await Rig()
        let (p, t) = (Self.paris, Self.tokyo)
        _ = try await rig.send(lat: p.lat, lon: p.lon, ts: rig.at(-600))
        _ = try await rig.send(lat: t.lat, lon: t.lon, ts: rig.at(-590))
        _ = try await rig.send(lat: t.lat, lon: t.lon, ts: rig.at(-580))
        #expect(rig.rejections == 2)
        #expect(try await rig.send(lat: p.lat, lon: p.lon + 0.001, ts: rig.at(-570)) == .accepted(nil))
        #expect(rig.rejections == 0)
        for s: Int64 in [-560, -550, -540] {
            #expect(try await rig.send(lat: t.lat, lon: t.lon, ts: rig.at(s)) == .dropped(.speed))
        }
        // Fixes dropped by other filters neither count nor break the run.
        #expect(try await rig.send(lat: 0, lon: 0, ts: rig.at(-535)) == .dropped(.zero))
        #expect(rig.rejections == 3)
        #expect(try await rig.send(lat: t.lat, lon: t.lon, ts: rig.at(-530)) == .accepted(.count))
    }

    @Test func aLongGapSkipsTheSpeedCheck() async throws {
        let rig = try await Rig { $0.reanchorAfter = 0 }  // never by count; the gap is 30 minutes
        let (p, t) = (Self.paris, Self.tokyo)
        _ = try await rig.send(lat: p.lat, lon: p.lon, ts: rig.at(-7200))
        for s: Int64 in [-7000, -6000, -5500] {
            #expect(try await rig.send(lat: t.lat, lon: t.lon, ts: rig.at(s)) == .dropped(.speed))
        }
        #expect(rig.rejections == 3)
        // 9,700 km in 30 minutes is still too fast, but the last accepted fix is old enough to give way.
        #expect(try await rig.send(lat: t.lat, lon: t.lon, ts: rig.at(-7200 + 1800)) == .accepted(.gap))
        #expect(rig.stored?.lat == t.lat)
        #expect(rig.counts.reanchors == [.gap: 1])
        // A plausible fix after a long gap is not a re-anchor.
        #expect(try await rig.send(lat: t.lat, lon: t.lon, ts: rig.at(-60)) == .accepted(nil))
        #expect(rig.counts.reanchors == [.gap: 1])

        let off = try await Rig {
            $0.reanchorAfter = 0
            $0.reanchorGapMs = 0
        }
        _ = try await off.send(lat: p.lat, lon: p.lon, ts: off.at(-10_800))  // three hours: 900 m/s
        #expect(try await off.send(lat: t.lat, lon: t.lon, ts: off.at(-60)) == .dropped(.speed))
    }

    @Test func theSpeedOffAcceptsAnyJump() async throws {
        let rig = try await Rig { $0.maxSpeed = 0 }
        _ = try await rig.send(lat: Self.paris.lat, lon: Self.paris.lon, ts: rig.at(-20))
        #expect(try await rig.send(lat: Self.tokyo.lat, lon: Self.tokyo.lon, ts: rig.at(-10)) == .accepted(nil))
        #expect(rig.stored?.lat == Self.tokyo.lat)
    }

    @Test func theRejectionCountSurvivesARestart() async throws {
        let rig = try await Rig()
        let (p, t) = (Self.paris, Self.tokyo)
        _ = try await rig.send(lat: p.lat, lon: p.lon, ts: rig.at(-600))
        _ = try await rig.send(lat: t.lat, lon: t.lon, ts: rig.at(-590))
        _ = try await rig.send(lat: t.lat, lon: t.lon, ts: rig.at(-580))
        let again = rig.restarted(IngestFilters())
        let third = try await rig.send([PositionReport(lat: t.lat, lon: t.lon, ts: rig.at(-570))], via: again)
        #expect(third.verdicts == [.dropped(.speed)])
        let fourth = try await rig.send([PositionReport(lat: t.lat, lon: t.lon, ts: rig.at(-560))], via: again)
        #expect(fourth.verdicts == [.accepted(.count)])
        #expect(again.counts.reanchors == [.count: 1])
    }

    @Test func aBatchOutOfOrderIsJudgedOldestFirstAndKeepsTheNewest() async throws {
        let rig = try await Rig()
        let batch = [
            PositionReport(lat: 1.002, lon: 1, ts: rig.at(-30)), PositionReport(lat: 1, lon: 1, ts: rig.at(-50)),
            PositionReport(lat: 1.001, lon: 1, ts: rig.at(-40)),
        ]
        let receipt = try await rig.send(batch)
        #expect(receipt.fixes.map(\.ts) == [rig.at(-50), rig.at(-40), rig.at(-30)])
        #expect(receipt.verdicts == [.accepted(nil), .accepted(nil), .accepted(nil)])
        #expect(receipt.latest?.lat == 1.002)
        #expect(rig.stored?.lat == 1.002)
        #expect(rig.committed.all.map(\.lat) == [1.002])
        #expect(rig.counts.stored == 1 && rig.counts.superseded == 2)
        // A batch wholly older than the stored fix is answered, stores nothing and commits nothing.
        let late = try await rig.send([
            PositionReport(lat: 9, lon: 9, ts: rig.at(-90)), PositionReport(lat: 9, lon: 9, ts: rig.at(-80)),
        ])
        #expect(late.verdicts == [.older, .older])
        #expect(late.latest == nil && rig.stored?.lat == 1.002)
        #expect(rig.committed.all.count == 1)
        #expect(rig.counts.older == 2)
    }

    @Test func aBatchMayHaveSomeFixesDroppedAndOthersStored() async throws {
        let rig = try await Rig()
        let (p, t) = (Self.paris, Self.tokyo)
        let receipt = try await rig.send([
            PositionReport(lat: p.lat, lon: p.lon, ts: rig.at(-40)), PositionReport(lat: 0, lon: 0, ts: rig.at(-35)),
            PositionReport(lat: t.lat, lon: t.lon, ts: rig.at(-30)),
            PositionReport(lat: p.lat + 0.001, lon: p.lon, ts: rig.at(-20)),
            PositionReport(lat: p.lat + 0.001, lon: p.lon, ts: rig.at(-20)),
        ])
        #expect(
            receipt.verdicts == [
                .accepted(nil), .dropped(.zero), .dropped(.speed), .accepted(nil), .dropped(.duplicate),
            ])
        #expect(rig.stored?.lat == p.lat + 0.001)
        #expect(rig.rejections == 0)
        #expect(rig.counts.dropped == [.zero: 1, .speed: 1, .duplicate: 1])
        #expect(rig.counts.stored == 1 && rig.counts.superseded == 1)
        // Every fix dropped: nothing stored, but the speed count is.
        let none = try await rig.send([
            PositionReport(lat: t.lat, lon: t.lon, ts: rig.at(-10)), PositionReport(lat: 0, lon: 0, ts: rig.at(-5)),
        ])
        #expect(none.latest == nil)
        #expect(rig.stored?.lat == p.lat + 0.001)
        #expect(rig.rejections == 1)
    }

    @Test func oneMalformedPositionRefusesTheBatchWithNothingApplied() async throws {
        let rig = try await Rig()
        let (p, t) = (Self.paris, Self.tokyo)
        _ = try await rig.send(lat: p.lat, lon: p.lon, ts: rig.at(-60))
        await #expect(throws: IngestRefusal.malformed("position 3: field 'lat' must be between -90 and 90")) {
            try await rig.send([
                PositionReport(lat: p.lat + 0.001, lon: p.lon, ts: rig.at(-50)),
                PositionReport(lat: t.lat, lon: t.lon, ts: rig.at(-40)),
                PositionReport(lat: 91, lon: 1, ts: rig.at(-30)),
            ])
        }
        await #expect(throws: IngestRefusal.malformed("field 'acc' must be between 0 and 1000000 m")) {
            try await rig.send(lat: 1, lon: 1, acc: -1, ts: rig.at(-20))
        }
        #expect(rig.stored?.lat == p.lat)
        #expect(rig.rejections == 0)
        #expect(rig.committed.all.count == 1)
        #expect(rig.counts.refused == ["malformed": 2])
        #expect(rig.counts.dropped.isEmpty && rig.counts.stored == 1)
    }

    @Test func refusalsAreCountedAndAFailedWriteCountsNoFix() async throws {
        let rig = try await Rig()
        await #expect(throws: IngestRefusal.badCredentials) {
            try await rig.ingest.report(
                TrackerReport(
                    device: "dev-1", key: String(repeating: "B", count: 43),
                    position: PositionReport(lat: 1, lon: 1)))
        }
        rig.store.state.withLock { $0.failWrites = true }
        // A report whose fixes are all dropped changes nothing, so needs no write: answered even so.
        #expect(try await rig.send(lat: 0, lon: 0, ts: rig.at(-2)) == .dropped(.zero))
        await #expect(throws: IngestRefusal.unavailable) { try await rig.send(lat: 1, lon: 1, ts: rig.at(-1)) }
        #expect(rig.stored == nil)
        #expect(rig.counts.refused == ["credentials": 1, "unavailable": 1])
        #expect(rig.counts.dropped == [.zero: 1] && rig.counts.stored == 0)
    }

    @Test func aTrackerWhoseOwnersAreAllSuspendedIsRefusedUntilTheSuspensionRunsOut() async throws {
        let rig = try await Rig()
        let until = rig.at(600)
        rig.accounts.state.withLock { $0.suspensions[1] = Suspension(reason: "spam", since: 0, until: until) }
        await #expect(throws: IngestRefusal.suspended) { try await rig.send(lat: 1, lon: 1, ts: rig.at(-10)) }
        #expect(rig.stored == nil && rig.committed.all.isEmpty)
        #expect(rig.counts.refused == ["suspended": 1])
        // The suspension ends by itself at `until`, on the injected clock: no one lifts it.
        rig.clock.advance(by: 600_000)
        #expect(try await rig.send(lat: 1, lon: 1, ts: rig.at(-10)) == .accepted(nil))
        #expect(rig.stored?.lat == 1)
    }

    @Test func aCoOwnerInGoodStandingKeepsTheTrackerReporting() async throws {
        let rig = try await Rig()
        _ = try await rig.items.setMember(bucket: rig.bucket, user: 2, role: .owner)
        rig.accounts.state.withLock { $0.suspensions[1] = Suspension(reason: "spam", since: 0, until: nil) }
        #expect(try await rig.send(lat: 1, lon: 1, ts: rig.at(-20)) == .accepted(nil))
        rig.accounts.state.withLock { $0.suspensions[2] = Suspension(reason: "spam", since: 0, until: nil) }
        await #expect(throws: IngestRefusal.suspended) { try await rig.send(lat: 2, lon: 2, ts: rig.at(-10)) }
        #expect(rig.stored?.lat == 1)
    }
}
