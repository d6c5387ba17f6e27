// `cairn seed`: load-test fixtures written straight into a data directory (see Fixtures.swift). Run it before
// starting the hub on that directory: the hub reads friendships into memory when it starts.
import ArgumentParser
import CairnApp
import Dispatch
import Foundation

struct Seed: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create load-test users, friendships and tokens directly in a data directory.",
        discussion: """
            Writes N users (no password; each gets one bearer token), a friend graph and the tokens file a load \
            tester reads: {"shape", "friendsPerUser", "seed", "users": [{"id", "username", "token", "friends"}]}. \
            Run it while the hub is stopped. Deterministic for a given --seed, apart from the tokens.
            """)

    @Option(help: "Number of users to create.")
    var users: Int

    @Option(help: "Friends per user (random: about this many; clustered: groups of friends+1).")
    var friends: Int = 10

    @Option(help: "Graph shape: random or clustered.")
    var graph: String = "random"

    @Option(help: "Seed for the friend graph.")
    var seed: UInt64 = 1

    @Option(help: "Username prefix (usernames are the prefix plus a zero-padded number).")
    var prefix: String = "load"

    @Option(help: "Data directory. [env: CAIRN_DATA] (default: ./data)")
    var data: String?

    @Option(help: "Where to write the tokens file (JSON).")
    var out: String

    func validate() throws {
        guard users >= 1 && users <= 10_000_000 else { throw ValidationError("--users must be between 1 and 10000000") }
        guard friends >= 0 && (friends < users || friends == 0) else {
            throw ValidationError("--friends must be at least 0 and less than --users")
        }
        guard FixturePlan(users: users, friends: friends, graph: graph) != nil else {
            throw ValidationError("--graph must be random or clustered")
        }
        guard !prefix.isEmpty, prefix.utf8.count <= 20,
              prefix.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F || $0 == 0x2E }) else {
            throw ValidationError("--prefix must be 1–20 characters of a-z, 0-9, '_' and '.'")
        }
    }

    func run() throws {
        let directory = Environment().resolve(data, "CAIRN_DATA", default: "./data")
        let plan = FixturePlan(users: users, friends: friends, graph: graph, seed: seed, prefix: prefix)!
        let data = try Maintenance(dataDirectory: directory)
        let started = Date()
        let file: FixtureFile
        do {
            file = try runBlocking { try await data.seed(plan) }
        } catch MaintenanceError.usernameTaken {
            throw ValidationError("users with prefix '\(prefix)' already exist in \(directory); choose another --prefix")
        }
        try data.close()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(file).write(to: URL(fileURLWithPath: out))
        let pairs = file.users.reduce(0) { $0 + $1.friends.count } / 2
        print("seeded \(file.users.count) users and \(pairs) friendships into \(directory) in "
              + String(format: "%.1f s", Date().timeIntervalSince(started)) + "; tokens in \(out)")
    }
}

/// Runs async work from a synchronous command.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let done = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var result: Result<T, any Error>?
    Task {
        do { result = .success(try await body()) } catch { result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try result!.get()
}
