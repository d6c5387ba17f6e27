// Generated friend graphs: deterministic for a seed, the asked-for degree, cliques for the clustered shape.
import CairnSeed
import Testing

@Suite(.timeLimit(.minutes(5)))
struct SeedGraphTests {
    @Test func randomGraphIsDeterministicForASeed() {
        let a = SeedGraph(users: 500, friends: 10, shape: .random, seed: 7).pairs()
        let b = SeedGraph(users: 500, friends: 10, shape: .random, seed: 7).pairs()
        let c = SeedGraph(users: 500, friends: 10, shape: .random, seed: 8).pairs()
        #expect(a.map { [$0.0, $0.1] } == b.map { [$0.0, $0.1] })
        #expect(a.map { [$0.0, $0.1] } != c.map { [$0.0, $0.1] })
    }

    @Test func randomGraphHasAboutTheAskedDegreeAndNoSelfOrDuplicatePairs() {
        let users = 2_000
        let k = 10
        let pairs = SeedGraph(users: users, friends: k, shape: .random, seed: 1).pairs()
        var degree = [Int](repeating: 0, count: users)
        for (a, b) in pairs {
            #expect(a < b)
            degree[a] += 1
            degree[b] += 1
        }
        #expect(Set(pairs.map { [$0.0, $0.1] }).count == pairs.count)
        let mean = Double(degree.reduce(0, +)) / Double(users)
        #expect(abs(mean - Double(k)) < 0.5, "mean degree \(mean)")
        #expect(degree.min()! >= k / 2)
    }

    @Test func clusteredGraphIsCliquesOfFriendsPlusOne() {
        let pairs = SeedGraph(users: 10, friends: 3, shape: .clustered, seed: 1).pairs()
        // Groups {0,1,2,3}, {4,5,6,7}, {8,9}: 6 + 6 + 1 pairs.
        #expect(pairs.count == 13)
        #expect(pairs.contains { $0 == (0, 3) })
        #expect(!pairs.contains { $0 == (3, 4) })
        #expect(pairs.contains { $0 == (8, 9) })
    }
}
