// `cairn seed`: writes N users, a friend graph and one token per user straight into a data directory, and the
// tokens to a JSON file a load tester reads. Tokens are minted exactly as the hub mints them (32 random bytes,
// base64url, only the SHA-256 digest stored), so the hub accepts them like any other. Either store takes them through
// `FixtureStore`: SQLite in a data directory (one node), or the PostgreSQL database several nodes share.
public import CairnCore
public import CairnCrypto
import CairnPostgres
public import CairnSeed
public import CairnSessions
import CairnStore
import Foundation

/// A store that bulk-loads generated accounts, tokens and friendships in one transaction (`cairn seed`).
public protocol FixtureStore: Sendable {
    /// Inserts `users` with one token each and `friendships` (pairs of indexes into `users`); returns the new ids in
    /// the order of `users`. A username that exists already aborts everything with `AccountStoreError.usernameTaken`.
    func insertFixtures(users: [FixtureUser], friendships: [(Int, Int)], createdAt: Int64) async throws -> [Int64]
}

extension SQLiteStore: FixtureStore {}
extension PostgresStore: FixtureStore {}

/// What to generate.
public struct FixturePlan: Sendable {
    /// Number of users.
    public var users: Int
    /// Friends per user.
    public var friends: Int
    /// Graph shape.
    public var shape: SeedGraphShape
    /// Seed for the graph.
    public var seed: UInt64
    /// Username prefix; usernames are prefix + zero-padded index.
    public var prefix: String

    /// Creates a plan.
    public init(users: Int, friends: Int, shape: SeedGraphShape = .random, seed: UInt64 = 1, prefix: String = "load") {
        self.users = users
        self.friends = friends
        self.shape = shape
        self.seed = seed
        self.prefix = prefix
    }

    /// Creates a plan whose graph shape is given by name (`random` or `clustered`); nil for any other name.
    public init?(users: Int, friends: Int, graph: String, seed: UInt64 = 1, prefix: String = "load") {
        guard let shape = SeedGraphShape(rawValue: graph) else { return nil }
        self.init(users: users, friends: friends, shape: shape, seed: seed, prefix: prefix)
    }
}

/// One generated account as written to the tokens file.
public struct FixtureAccount: Codable, Sendable, Equatable {
    /// User id.
    public var id: Int64
    /// Username.
    public var username: String
    /// Bearer token.
    public var token: String
    /// Ids of this user's friends.
    public var friends: [Int64]
}

/// The tokens file.
public struct FixtureFile: Codable, Sendable {
    /// The graph shape used.
    public var shape: String
    /// Friends per user asked for.
    public var friendsPerUser: Int
    /// The seed used.
    public var seed: UInt64
    /// Every account.
    public var users: [FixtureAccount]
}

/// Generates fixtures into a store.
public enum Fixtures {
    /// Writes the plan's users, friendships and tokens into `store` and returns the file contents.
    public static func generate(
        _ plan: FixturePlan, into store: some FixtureStore, random: some RandomSource,
        clock: some Clock
    ) async throws -> FixtureFile {
        let width = max(String(plan.users).count, 6)
        var accounts: [FixtureUser] = []
        var tokens: [String] = []
        accounts.reserveCapacity(plan.users)
        for i in 0..<plan.users {
            let raw = random.bytes(32)
            tokens.append(Base64URL.encode(raw))
            let number = String(i + 1)
            let username = plan.prefix + String(repeating: "0", count: width - number.count) + number
            accounts.append(FixtureUser(username: username, name: "Load \(i + 1)", tokenHash: Digest.sha256(raw)))
        }
        let pairs = SeedGraph(users: plan.users, friends: plan.friends, shape: plan.shape, seed: plan.seed).pairs()
        let ids = try await store.insertFixtures(users: accounts, friendships: pairs, createdAt: clock.now())
        var friends = [[Int64]](repeating: [], count: plan.users)
        for (a, b) in pairs {
            friends[a].append(ids[b])
            friends[b].append(ids[a])
        }
        let users = (0..<plan.users).map {
            FixtureAccount(
                id: ids[$0], username: accounts[$0].username, token: tokens[$0], friends: friends[$0].sorted())
        }
        return FixtureFile(shape: plan.shape.rawValue, friendsPerUser: plan.friends, seed: plan.seed, users: users)
    }
}
