// The schedule spreads reports over the period: each user reports once per period at its own phase, in time
// order, and the window holds exactly users × rate × duration slots.
import CairnLoadTest
import Testing

@Suite(.timeLimit(.minutes(5)))
struct ReportScheduleTests {
    @Test func everyUserReportsOncePerPeriodInTimeOrder() throws {
        let w = try Workload.generate(WorkloadPlan(users: 100, friends: 0, seed: 2))
        var schedule = ReportSchedule(phases: w.phases, rate: 4, duration: 5)
        var times: [[Double]] = Array(repeating: [], count: 100)
        var last = -1.0
        var now = 0.0
        while schedule.nextDue != nil {
            now += 0.001
            schedule.due(upTo: now) { user in
                times[user].append(now)
            }
            #expect(now >= last)
            last = now
        }
        #expect(times.allSatisfy { $0.count == 20 })
        for (user, t) in times.enumerated() {
            #expect(abs(t[0] - w.phases[user] * 0.25) <= 0.0011)
            for k in 1..<t.count { #expect(abs(t[k] - t[k - 1] - 0.25) <= 0.0011) }
        }
        #expect(schedule.totalSlots == 100 * 4 * 5)
    }

    @Test func nothingIsDueAfterTheWindow() {
        var schedule = ReportSchedule(phases: [0, 0.5], rate: 1, duration: 2)
        var count = 0
        schedule.due(upTo: 100) { _ in count += 1 }
        #expect(count == 4)
        #expect(schedule.nextDue == nil)
    }
}
