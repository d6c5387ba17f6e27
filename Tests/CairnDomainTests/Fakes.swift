// In-memory stand-ins for the hub's ports, so the domain is tested without sockets, SQLite or sleeping:
// a store kept in a dictionary, a scheduler that collects jobs for the test to run on its own thread (the test
// thread plays the event loop), an outbound that records what would have been sent, and a seeded random source.
import CairnCrypto
import CairnDomain
import CairnWire
import Foundation
import Synchronization
import Testing

final class MemoryAccountStore: AccountStore {
    struct State {
        var users: [Int64: (user: User, hash: String?)] = [:]
        var tokens: [[UInt8]: Int64] = [:]
        var nextID: Int64 = 1
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
        state.withLock { s in s.tokens[tokenHash].flatMap { s.users[$0]?.user } }
    }

    func deleteToken(hash: [UInt8]) async throws -> Bool {
        state.withLock { $0.tokens.removeValue(forKey: hash) != nil }
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
    var closes: [ConnectionID: (code: CloseCode, reason: String)] = [:]

    func send(_ connection: ConnectionID, _ json: UnsafeRawBufferPointer) {
        let object = try! JSONSerialization.jsonObject(with: Data(json)) as! [String: Any]
        sent[connection, default: []].append(object)
    }

    func close(_ connection: ConnectionID, code: CloseCode, reason: String) {
        closes[connection] = (code, reason)
    }

    func take(_ connection: ConnectionID) -> [[String: Any]] {
        defer { sent[connection] = [] }
        return sent[connection] ?? []
    }
}

func fastHasher(_ random: any RandomSource) -> PasswordHasher {
    PasswordHasher(parameters: ScryptParameters(n: 1024, r: 8, p: 1), workers: 1, random: random)
}

extension Hub {
    func receive(_ connection: ConnectionID, _ text: String) {
        Array(text.utf8).withUnsafeBytes { received(connection, frame: $0) }
    }
}

func errorCode(_ object: [String: Any]) -> String? {
    (object["error"] as? [String: Any])?["code"] as? String
}
