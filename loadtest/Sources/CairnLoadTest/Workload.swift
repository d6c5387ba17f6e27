// The workload: who the simulated users are, whom each watches, how each moves and when in the reporting period
// each speaks. It is a pure function of the plan (and, against Cairn, of the tokens file `cairn seed` wrote with the
// same graph seed), so Cairn and Mosquitto are driven with identical users, graph, movement and timing.
public import CairnSeed

/// What to simulate.
public struct WorkloadPlan: Sendable, Equatable {
    /// Number of users.
    public var users: Int
    /// Friends per user (random: about this many; clustered: groups of friends + 1).
    public var friends: Int
    /// Graph shape.
    public var shape: SeedGraphShape
    /// Seed for the graph, movement and phases.
    public var seed: UInt64
    /// Where users move.
    public var box: CityBox
    /// Who walks, cycles, drives.
    public var modes: ModeMix

    /// Creates a plan.
    public init(
        users: Int, friends: Int, shape: SeedGraphShape = .random, seed: UInt64 = 1,
        box: CityBox = .paris, modes: ModeMix = .city
    ) {
        self.users = users
        self.friends = friends
        self.shape = shape
        self.seed = seed
        self.box = box
        self.modes = modes
    }
}

/// Why a workload cannot be built.
public enum WorkloadError: Error, Equatable, CustomStringConvertible {
    /// The plan's numbers are out of range.
    case invalidPlan(String)
    /// The tokens file does not match the plan or is inconsistent.
    case invalidTokens(String)

    /// A sentence for the command line.
    public var description: String {
        switch self {
        case .invalidPlan(let m): "invalid workload: \(m)"
        case .invalidTokens(let m): "invalid tokens file: \(m)"
        }
    }
}

/// Users, graph, movers and phases for one run.
public struct Workload: Sendable {
    /// The plan it was built from.
    public let plan: WorkloadPlan
    /// User ids, by index.
    public let ids: [Int64]
    /// Bearer tokens by index (empty when the workload was generated without a tokens file).
    public let tokens: [String]
    /// Friends of each user, as indexes (friendship is mutual: a user's friends are also its watchers).
    public let friends: [[Int32]]
    /// Each user's movement.
    public var movers: [Mover]
    /// Each user's offset inside the reporting period, as a fraction in [0, 1).
    public let phases: [Double]

    /// Number of users.
    public var count: Int { ids.count }

    /// Builds the workload from the plan alone: ids are 1...N and the graph is `SeedGraph` for the plan's seed.
    public static func generate(_ plan: WorkloadPlan) throws(WorkloadError) -> Workload {
        try validate(plan)
        var friends = [[Int32]](repeating: [], count: plan.users)
        for (a, b) in SeedGraph(users: plan.users, friends: plan.friends, shape: plan.shape, seed: plan.seed).pairs() {
            friends[a].append(Int32(b))
            friends[b].append(Int32(a))
        }
        return Workload(plan: plan, ids: (0..<plan.users).map { Int64($0 + 1) }, tokens: [], friends: friends)
    }

    /// Builds the workload from a `cairn seed` tokens file: its ids, tokens and graph, the plan's movement.
    /// `plan.users` may be smaller than the file (the first N users are taken, friendships to others dropped).
    public static func fromTokens(_ file: TokensFile, plan: WorkloadPlan) throws(WorkloadError) -> Workload {
        try validate(plan)
        guard file.users.count >= plan.users else {
            throw .invalidTokens("it holds \(file.users.count) users, \(plan.users) asked for")
        }
        let accounts = file.users.prefix(plan.users)
        var index: [Int64: Int32] = [:]
        for (i, a) in accounts.enumerated() {
            guard index.updateValue(Int32(i), forKey: a.id) == nil else {
                throw .invalidTokens("user id \(a.id) twice")
            }
        }
        let friends = accounts.map { a in a.friends.compactMap { index[$0] }.sorted() }
        var plan = plan
        if let shape = SeedGraphShape(rawValue: file.shape) { plan.shape = shape }
        plan.friends = file.friendsPerUser
        return Workload(plan: plan, ids: accounts.map(\.id), tokens: accounts.map(\.token), friends: friends)
    }

    private static func validate(_ plan: WorkloadPlan) throws(WorkloadError) {
        guard plan.users >= 1 && plan.users <= 1_000_000 else { throw .invalidPlan("users must be 1...1000000") }
        guard plan.friends >= 0 && (plan.friends < plan.users || plan.friends == 0) else {
            throw .invalidPlan("friends must be at least 0 and less than users")
        }
    }

    private init(plan: WorkloadPlan, ids: [Int64], tokens: [String], friends: [[Int32]]) {
        self.plan = plan
        self.ids = ids
        self.tokens = tokens
        self.friends = friends.map { $0.sorted() }
        var rng = SplitMix64(seed: plan.seed ^ 0x4C4F_4144_5445_5354)  // "LOADTEST": apart from the graph's stream
        var movers: [Mover] = []
        var phases: [Double] = []
        movers.reserveCapacity(ids.count)
        phases.reserveCapacity(ids.count)
        for _ in ids.indices {
            let mode = plan.modes.draw(using: &rng)
            movers.append(Mover(box: plan.box, mode: mode, seed: rng.next()))
            phases.append(unitInterval(&rng))
        }
        self.movers = movers
        self.phases = phases
    }

    /// Total friendships (each counted once).
    public var friendships: Int { friends.reduce(0) { $0 + $1.count } / 2 }
}
