// The workload is a pure function of its plan: the same seed gives the same users, graph, movement and phases on
// every run (so Cairn and Mosquitto see the same load), another seed gives another workload.
import CairnLoadTest
import CairnSeed
import Testing

@Suite(.timeLimit(.minutes(5)))
struct WorkloadTests {
    /// Positions of every user after a fixed sequence of steps, as comparable numbers.
    static func trace(_ workload: Workload, steps: [Double]) -> [[Double]] {
        var w = workload
        var out: [[Double]] = []
        for dt in steps {
            for i in 0..<w.count {
                w.movers[i].advance(by: dt)
                let c = w.movers[i].coordinate(in: w.plan.box)
                out.append([c.lat, c.lon])
            }
        }
        return out
    }

    @Test func theSameSeedGivesTheSameWorkload() throws {
        let plan = WorkloadPlan(users: 300, friends: 8, shape: .random, seed: 42)
        let a = try Workload.generate(plan)
        let b = try Workload.generate(plan)
        #expect(a.ids == b.ids)
        #expect(a.friends == b.friends)
        #expect(a.phases == b.phases)
        #expect(a.movers.map(\.mode) == b.movers.map(\.mode))
        #expect(Self.trace(a, steps: [0.5, 3, 60, 600]) == Self.trace(b, steps: [0.5, 3, 60, 600]))
    }

    @Test func anotherSeedGivesAnotherWorkload() throws {
        let a = try Workload.generate(WorkloadPlan(users: 300, friends: 8, seed: 42))
        let b = try Workload.generate(WorkloadPlan(users: 300, friends: 8, seed: 43))
        #expect(a.friends != b.friends)
        #expect(a.phases != b.phases)
        #expect(Self.trace(a, steps: [10]) != Self.trace(b, steps: [10]))
    }

    @Test func theGraphIsTheSeedGraphAndMutual() throws {
        let plan = WorkloadPlan(users: 50, friends: 4, shape: .clustered, seed: 3)
        let w = try Workload.generate(plan)
        let pairs = SeedGraph(users: 50, friends: 4, shape: .clustered, seed: 3).pairs()
        #expect(w.friendships == pairs.count)
        for (a, b) in pairs {
            #expect(w.friends[a].contains(Int32(b)))
            #expect(w.friends[b].contains(Int32(a)))
        }
        #expect(w.phases.allSatisfy { $0 >= 0 && $0 < 1 })
    }

    @Test func aTokensFileGivesItsIdsTokensAndFriends() throws {
        let file = TokensFile(
            shape: "clustered", friendsPerUser: 2, seed: 9,
            users: [
                .init(id: 10, username: "a", token: "ta", friends: [11, 12]),
                .init(id: 11, username: "b", token: "tb", friends: [10, 12]),
                .init(id: 12, username: "c", token: "tc", friends: [10, 11]),
            ])
        let w = try Workload.fromTokens(file, plan: WorkloadPlan(users: 2, friends: 0, seed: 1))
        #expect(w.ids == [10, 11])
        #expect(w.tokens == ["ta", "tb"])
        #expect(w.friends == [[1], [0]])  // user 12 is not simulated, so friendships to it are dropped
        #expect(w.plan.shape == .clustered)
        #expect(throws: WorkloadError.invalidTokens("it holds 3 users, 4 asked for")) {
            try Workload.fromTokens(file, plan: WorkloadPlan(users: 4, friends: 0))
        }
    }

    @Test func badPlansAreRefused() {
        #expect(throws: WorkloadError.self) { try Workload.generate(WorkloadPlan(users: 0, friends: 0)) }
        #expect(throws: WorkloadError.self) { try Workload.generate(WorkloadPlan(users: 5, friends: 5)) }
    }
}
