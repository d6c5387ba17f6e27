// In-memory stand-ins for the hub's ports, so the domain is tested without sockets, SQLite or sleeping:
// a store kept in a dictionary, a scheduler that collects jobs for the test to run on its own thread (the test
// thread plays the event loop), an outbound that records what would have been sent, and a seeded random source.
import CairnCrypto
import CairnDomain
import CairnLoop
import CairnProtocol
import CairnWire
import Foundation
import Synchronization
import Testing

final class MemoryAccountStore: AccountStore, SocialStore, RoleStore {
    struct State {
        var users: [Int64: (user: User, hash: String?)] = [:]
        var tokens: [[UInt8]: Int64] = [:]
        var nextID: Int64 = 1
        var friendships: Set<[Int64]> = []
        var requests: Set<[Int64]> = []
        var rules: [[Int64]: (ShareLevel, Int64?)] = [:]
        var ruleVersions: [[Int64]: Int64] = [:]
        var positions: [Int64: Fix] = [:]
        var history: [StoredFix] = []
        var flushes: [PositionBatch] = []
        var failWrites = false
        var failReads = false
        /// Owners whose share-rule writes fail (a failure aimed at one request, whatever runs concurrently).
        var failRuleWritesOf: Set<Int64> = []
        /// Users holding the ops role.
        var ops: Set<Int64> = []
    }
    let state = Mutex(State())

    func createUser(_ new: NewUser) async throws -> User {
        try state.withLock { s in
            if s.users.values.contains(where: { $0.user.username == new.username }) {
                throw AccountStoreError.usernameTaken
            }
            let user = User(id: s.nextID, username: new.username, name: new.name, isGuest: new.isGuest)
            s.users[user.id] = (user, new.passwordHash)
            s.nextID += 1
            return user
        }
    }

    func credentials(username: String) async throws -> StoredCredentials? {
        state.withLock { s in
            s.users.values.first { $0.user.username == username }.map { StoredCredentials(user: $0.user, passwordHash: $0.hash) }
        }
    }

    func insertToken(hash: [UInt8], userID: Int64, createdAt: Int64) async throws {
        state.withLock { $0.tokens[hash] = userID }
    }

    func user(tokenHash: [UInt8]) async throws -> User? {
        try state.withLock { s in
            if s.failReads { throw InjectedFailure() }
            return s.tokens[tokenHash].flatMap { s.users[$0]?.user }
        }
    }

    func deleteToken(hash: [UInt8]) async throws -> Bool {
        state.withLock { $0.tokens.removeValue(forKey: hash) != nil }
    }

    struct InjectedFailure: Error {}

    private func write(_ body: (inout State) -> Void) throws {
        try state.withLock { s in
            if s.failWrites { throw InjectedFailure() }
            body(&s)
        }
    }

    func hasRole(_ role: UserRole, userID: Int64) async throws -> Bool {
        try state.withLock { s in
            if s.failReads { throw InjectedFailure() }
            return role == .ops && s.ops.contains(userID)
        }
    }

    func loadSocial() throws -> SocialSnapshot {
        state.withLock { s in
            var snapshot = SocialSnapshot()
            snapshot.friendships = s.friendships.map { ($0[0], $0[1]) }
            snapshot.requests = s.requests.map { (from: $0[0], to: $0[1]) }
            snapshot.shareRules = s.rules.map { key, value in
                StoredShareRule(ownerID: key[0], viewerID: key[1] == 0 ? nil : key[1], level: value.0, until: value.1,
                                version: s.ruleVersions[key] ?? 0)
            }
            snapshot.maxRuleVersion = s.ruleVersions.values.max() ?? 0
            snapshot.positions = s.positions.map { StoredFix(userID: $0.key, fix: $0.value) }
            return snapshot
        }
    }

    func user(id: Int64) async throws -> User? { state.withLock { $0.users[id]?.user } }

    func users(ids: [Int64]) async throws -> [User] {
        state.withLock { s in ids.compactMap { s.users[$0]?.user }.sorted { $0.id < $1.id } }
    }

    func searchUsers(prefix: String, excluding: Int64, limit: Int) async throws -> [User] {
        state.withLock { s in
            s.users.values.map(\.user)
                .filter { !$0.isGuest && $0.id != excluding
                    && ($0.username.hasPrefix(prefix.lowercased()) || $0.name.lowercased().hasPrefix(prefix.lowercased())) }
                .sorted { $0.username < $1.username }
                .prefix(limit).map { $0 }
        }
    }

    func addFriendRequest(from: Int64, to: Int64, at: Int64) async throws { try write { $0.requests.insert([from, to]) } }
    func deleteFriendRequest(from: Int64, to: Int64) async throws { try write { $0.requests.remove([from, to]) } }

    func addFriendship(_ a: Int64, _ b: Int64, at: Int64) async throws {
        try write { s in
            s.friendships.insert([min(a, b), max(a, b)])
            s.requests.remove([a, b]); s.requests.remove([b, a])
        }
    }

    func deleteFriendship(_ a: Int64, _ b: Int64, versionAB: Int64, versionBA: Int64) async throws {
        try write { s in
            s.friendships.remove([min(a, b), max(a, b)])
            for (key, version) in [([a, b], versionAB), ([b, a], versionBA)] where version > s.ruleVersions[key, default: 0] {
                s.ruleVersions[key] = version
                s.rules[key] = nil
            }
        }
    }

    func saveShareRule(ownerID: Int64, viewerID: Int64?, level: ShareLevel?, until: Int64?, version: Int64) async throws {
        if state.withLock({ $0.failRuleWritesOf.contains(ownerID) }) { throw InjectedFailure() }
        try write { s in
            let key = [ownerID, viewerID ?? 0]
            guard version > s.ruleVersions[key, default: 0] else { return }
            s.ruleVersions[key] = version
            s.rules[key] = level.map { ($0, until) }
        }
    }

    func flushPositions(_ batch: PositionBatch) async throws {
        try write { s in
            for item in batch.latest { s.positions[item.userID] = item.fix }
            s.history += batch.history
            s.flushes.append(batch)
        }
    }
}

/// xorshift64*: deterministic bytes for tests.
final class SeededRandom: RandomSource {
    private let state: Mutex<UInt64>
    init(seed: UInt64) { state = Mutex(seed == 0 ? 0x9E3779B97F4A7C15 : seed) }
    func bytes(_ count: Int) -> [UInt8] {
        state.withLock { x in
            (0..<count).map { _ in
                x ^= x >> 12; x ^= x << 25; x ^= x >> 27
                return UInt8(truncatingIfNeeded: (x &* 0x2545F4914F6CDD1D) >> 56)
            }
        }
    }
}

/// Collects jobs; the test runs them on its own thread, which plays the event loop.
final class CollectingScheduler: LoopScheduler {
    private let jobs = Mutex<[@Sendable () -> Void]>([])

    func execute(_ job: @escaping @Sendable () -> Void) { jobs.withLock { $0.append(job) } }

    /// Waits (up to 10 s) until at least `count` jobs have arrived, then runs all queued jobs.
    func run(atLeast count: Int = 1) async throws {
        var waited = 0
        while jobs.withLock({ $0.count }) < count {
            try await Task.sleep(nanoseconds: 1_000_000)
            waited += 1
            if waited > 10_000 { Issue.record("timed out waiting for \(count) job(s)"); return }
        }
        let taken = jobs.withLock { j in defer { j.removeAll() }; return j }
        for job in taken { job() }
    }
}

/// Records replies and closes per connection, decoded with Foundation for easy assertions.
final class RecordingOutbound: Outbound {
    var sent: [ConnectionID: [[String: Any]]] = [:]
    var latest: [ConnectionID: [Int64: [UInt8]]] = [:]
    var closes: [ConnectionID: (code: CloseCode, reason: String)] = [:]

    func sendLatest(_ connection: ConnectionID, key: Int64, _ json: [UInt8]) { latest[connection, default: [:]][key] = json }
    func dropLatest(_ connection: ConnectionID, key: Int64) { latest[connection]?[key] = nil }

    /// Takes the latest-wins slots of a connection, decoded, keyed by their key.
    func takeLatest(_ connection: ConnectionID) -> [Int64: [String: Any]] {
        defer { latest[connection] = nil }
        return (latest[connection] ?? [:]).mapValues { try! JSONSerialization.jsonObject(with: Data($0)) as! [String: Any] }
    }

    func send(_ connection: ConnectionID, _ json: UnsafeRawBufferPointer) {
        let object = try! JSONSerialization.jsonObject(with: Data(json)) as! [String: Any]
        sent[connection, default: []].append(object)
    }

    func close(_ connection: ConnectionID, code: UInt16, reason: String) {
        closes[connection] = (CloseCode(rawValue: code)!, reason)
    }

    func take(_ connection: ConnectionID) -> [[String: Any]] {
        defer { sent[connection] = [] }
        return sent[connection] ?? []
    }
}

func fastHasher(_ random: any RandomSource) -> PasswordHasher {
    PasswordHasher(parameters: ScryptParameters(n: 1024, r: 8, p: 1), workers: 1, random: random)
}

extension Router {
    func receive(_ connection: ConnectionID, _ text: String) {
        Array(text.utf8).withUnsafeBytes { received(connection, frame: $0) }
    }
}

func errorCode(_ object: [String: Any]) -> String? {
    (object["error"] as? [String: Any])?["code"] as? String
}
