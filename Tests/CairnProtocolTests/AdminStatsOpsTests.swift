import CairnCore
import CairnHub
// `admin.stats` through the router: one row per UTC day of the range, oldest first, today last; new users counted
// by registration day (guests left out), active users by the days they authenticated or sent an op (noted on the
// loop, written on the tick); the columns pictures will fill read 0 and the median is absent; `days` outside
// 1–366 is a bad request and the op is forbidden without the role.
import CairnHubTestSupport
import CairnLoop
import CairnProtocol
import CairnWire
import Testing

@testable import CairnAdmin

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct AdminStatsOpsTests {
    @Test func rowsCountNewAndActiveUsersPerDay() async throws {
        let h = HubHarness()
        h.hub.statistics.add(h.store.accountDailyStats)
        let admins = AdminOpsTests()
        _ = try await admins.member(h, 1, "root", admin: true)
        _ = try await admins.member(h, 2, "alice")
        _ = try await admins.member(h, 3, "bob")
        h.router.connectionOpened(4, token: nil)
        try await h.send(4, #"{"id":1,"op":"guest"}"#, completions: 1)
        h.hub.tick()
        try await h.settle()  // the day's marks written (and the tick's purges, whichever answers first)
        // The next day only alice sends an op.
        h.clock.advance(by: 86_400_000)
        h.hub.tick()
        _ = try await h.request(2, #"{"id":7,"op":"friend.list"}"#, id: 7, completions: 1)
        _ = try await h.request(2, #"{"id":8,"op":"friend.list"}"#, id: 8, completions: 1)
        h.hub.tick()
        try await h.settle()

        let reply = try await h.request(1, #"{"id":9,"op":"admin.stats","days":3}"#, id: 9, completions: 1)
        let rows = try #require(reply["rows"] as? [[String: Any]])
        #expect(rows.count == 3)
        let today = DailyStatsRange.day(of: h.clock.now())
        #expect(rows.map { $0["day"] as? Int64 } == [today - 2, today - 1, today])
        #expect(rows.last?["date"] as? String == "2025-11-22")
        #expect(rows.map { $0["new_users"] as? Int } == [0, 3, 0])
        // Root's own request today is noted, and written on the next tick: not in this answer yet.
        #expect(rows.map { $0["active_users"] as? Int } == [0, 3, 1])
        for row in rows {
            #expect(row["pictures_posted"] as? Int == 0 && row["likes"] as? Int == 0)
            #expect(row["reports_opened"] as? Int == 0 && row["reports_resolved"] as? Int == 0)
            #expect(row["median_resolve_s"] == nil)
        }
        let standard = try await h.request(1, #"{"id":10,"op":"admin.stats"}"#, id: 10, completions: 1)
        #expect((standard["rows"] as? [Any])?.count == 30)
    }

    @Test func daysOutOfRangeAndCallersWithoutTheRoleAreRefused() async throws {
        let h = HubHarness()
        let admins = AdminOpsTests()
        _ = try await admins.member(h, 1, "root", admin: true)
        _ = try await admins.member(h, 2, "alice")
        for days in [0, 367, -1] {
            let reply = try await h.request(1, #"{"id":3,"op":"admin.stats","days":\#(days)}"#, id: 3, completions: 1)
            #expect(errorCode(reply) == "bad_request")
        }
        let most = try await h.request(1, #"{"id":4,"op":"admin.stats","days":366}"#, id: 4, completions: 1)
        #expect((most["rows"] as? [Any])?.count == 366)
        let forbidden = try await h.request(2, #"{"id":5,"op":"admin.stats"}"#, id: 5, completions: 1)
        #expect(errorCode(forbidden) == "forbidden")
    }
}
