// The friend graph for generated fixtures (load tests). Deterministic for a seed, so two runs — or Cairn and a
// peer broker driven with the same workload — see the same users and the same friendships. It is a module of its
// own, with no dependencies, because both `cairn seed` (through CairnApp) and the load tester generate it, and the
// load tester is a client that must not link the server, the store and GRDB just to get a graph.
//
// Two shapes: `random`, where every user has about `friends` friends chosen uniformly (a random regular-ish graph:
// each user asks ⌈k/2⌉ random others, duplicates dropped), and `clustered`, where users form cliques of
// `friends + 1` (everyone in a group is friends with everyone else: the friend-map app's family or team).

/// The shape of a generated friend graph.
public enum SeedGraphShape: String, Sendable, CaseIterable {
    /// Friends chosen uniformly at random.
    case random
    /// Cliques of `friends + 1` users.
    case clustered
}

/// Generates friend pairs over users `0..<users` (indexes, not ids).
public struct SeedGraph: Sendable {
    /// Number of users.
    public let users: Int
    /// Target friends per user.
    public let friends: Int
    /// Shape of the graph.
    public let shape: SeedGraphShape
    /// Seed of the generator.
    public let seed: UInt64

    /// Creates a plan; `friends` must be below `users`.
    public init(users: Int, friends: Int, shape: SeedGraphShape, seed: UInt64) {
        precondition(users >= 1 && friends >= 0 && (friends < users || friends == 0), "need 0 ≤ friends < users")
        self.users = users
        self.friends = friends
        self.shape = shape
        self.seed = seed
    }

    /// The friend pairs as (lower index, higher index), each once, sorted.
    public func pairs() -> [(Int, Int)] {
        var set = Set<UInt64>()
        func add(_ a: Int, _ b: Int) {
            guard a != b else { return }
            set.insert(UInt64(min(a, b)) << 32 | UInt64(max(a, b)))
        }
        switch shape {
        case .clustered:
            let size = friends + 1
            var start = 0
            while start < users {
                let end = min(users, start + size)
                for a in start..<end { for b in (a + 1)..<end { add(a, b) } }
                start = end
            }
        case .random:
            var rng = SplitMix64(seed: seed)
            let asks = (friends + 1) / 2
            for a in 0..<users {
                for _ in 0..<asks {
                    var b = Int(rng.next() % UInt64(users - 1))
                    if b >= a { b += 1 }
                    add(a, b)
                }
            }
        }
        return set.sorted().map { (Int($0 >> 32), Int($0 & 0xFFFF_FFFF)) }
    }
}

/// SplitMix64: small, fast, and the same sequence everywhere for a seed (fixtures and benchmarks).
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    /// Starts the sequence for `seed`.
    public init(seed: UInt64) { state = seed }
    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
