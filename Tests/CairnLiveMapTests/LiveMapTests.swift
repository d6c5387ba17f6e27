import CairnHub
import CairnHubTestSupport
import CairnLoop
import CairnSocial
import Testing

// The live map in domain terms: what each viewer is handed (precise, approximate, nothing) before anything is
// encoded, each version encoded once per move, refusals that change nothing, late fixes kept out of the fan-out.
@testable import CairnCore
@testable import CairnLiveMap

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct LiveMapTests {
    /// User 1 with friends: 2 and 6 precise, 3 approximate, 4 hidden, 5 not watching; 7 is no friend.
    func scene() async throws -> (DomainHarness, Caller) {
        let h = DomainHarness()
        try await h.makeUsers(7)
        try h.restore(
            friends: [(1, 2), (1, 3), (1, 4), (1, 5), (1, 6)],
            rules: [(1, 3, .approximate), (1, 4, .hidden)])
        let owner = h.connect(1, as: 1)
        for user: Int64 in [2, 3, 4, 6, 7] { h.connect(ConnectionID(user), as: user, watching: true) }
        h.connect(5, as: 5)
        return (h, owner)
    }

    @Test func eachWatchingFriendIsHandedOnlyWhatTheyMaySee() async throws {
        let (h, owner) = try await scene()
        let outcome = try h.hub.liveMap.report(owner, PositionReport(lat: 48.85661, lon: 2.35222, acc: 7, bat: 80))
        #expect(outcome == .accepted)
        let byViewer = Dictionary(uniqueKeysWithValues: h.events.moved.map { ($0.viewer, $0) })
        #expect(Set(byViewer.keys) == [2, 3, 6])  // not 4 (hidden), 5 (not watching) or 7 (no friend)
        let precise = try #require(byViewer[2])
        #expect(!precise.approximate && precise.fix.lat == 48.85661 && precise.fix.acc == 7 && precise.fix.bat == 80)
        #expect(precise.watching == [2])
        let approximate = try #require(byViewer[3])
        #expect(approximate.approximate)
        #expect(approximate.fix.lat != 48.85661 || approximate.fix.lon != 2.35222)
        #expect(approximate.fix.acc == nil && approximate.fix.bat == nil && approximate.fix.alt == nil)
        #expect(approximate.fix.ts == precise.fix.ts)
        // Two precise viewers and one approximate: two versions encoded, not three.
        #expect(h.events.encodings == 2)
    }

    @Test func aReportOutOfRangeIsRefusedAndChangesNothing() async throws {
        let (h, owner) = try await scene()
        #expect(throws: DomainError.badRequest("field 'lat' must be between -90 and 90")) {
            try h.hub.liveMap.report(owner, PositionReport(lat: 91, lon: 0))
        }
        #expect(throws: DomainError.badRequest("field 'bat' must be between 0 and 100 %")) {
            try h.hub.liveMap.report(owner, PositionReport(lat: 1, lon: 1, bat: 101))
        }
        #expect(h.hub.liveMap.fix(of: 1) == nil)
        #expect(h.hub.liveMap.count == 0)
        #expect(h.events.moved.isEmpty)
    }

    @Test func aLateFixIsKeptForTheSnapshotButNeverFannedOut() async throws {
        let (h, owner) = try await scene()
        let now = h.clock.now()
        _ = try h.hub.liveMap.report(owner, PositionReport(lat: 10, lon: 10, ts: now))
        h.events.clear()
        let outcome = try h.hub.liveMap.report(owner, PositionReport(lat: 11, lon: 11, ts: now - 60_000))
        #expect(outcome == .stale)
        #expect(h.events.moved.isEmpty)
        #expect(h.hub.liveMap.fix(of: 1)?.lat == 10)
        #expect(h.hub.liveMap.pendingRows == 2)  // the latest, and the late one as history
    }

    @Test func aNewFriendshipShowsEachSideTheOthersPositionAtOnce() async throws {
        let (h, owner) = try await scene()
        _ = try h.hub.liveMap.report(owner, PositionReport(lat: 5, lon: 5))
        h.events.clear()
        h.hub.liveMap.showCurrentPosition(of: 1, to: 7)
        #expect(h.events.shown.isEmpty)  // 7 is no friend: the level is hidden
        #expect(h.events.hidden.map(\.viewer) == [7])
        h.events.clear()
        h.hub.liveMap.showCurrentPosition(of: 1, to: 2)
        #expect(h.events.shown.map(\.viewer) == [2])
        #expect(h.events.shown.first?.position.fix.lat == 5)
    }
}
