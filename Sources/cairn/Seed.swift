// `cairn seed`: load-test fixtures written straight into a data directory (see Fixtures.swift). Run it before
// starting the hub on that directory: the hub reads friendships into memory when it starts, so the command holds
// the data directory's lock and is refused while a hub runs. The tokens file holds live credentials: mode 0600.
// With a storage URL (StorageOptions: --storage-url, CAIRN_STORAGE_URL or the configuration file) it writes the same
// fixtures into the PostgreSQL database several nodes share (a load test of a cluster); no lock guards that
// database, so run it before the nodes start.
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
            Run it while the hub is stopped (it is refused while a hub holds the data directory). The tokens file \
            is created with mode 0600. Deterministic for a given --seed, apart from the tokens. With --storage-url \
            the fixtures go to the PostgreSQL database several nodes share instead; start the nodes afterwards.
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

    @Option(help: "Where to write the tokens file (JSON).")
    var out: String

    @OptionGroup var storage: StorageOptions

    func validate() throws {
        guard users >= 1 && users <= 10_000_000 else { throw ValidationError("--users must be between 1 and 10000000") }
        guard friends >= 0 && (friends < users || friends == 0) else {
            throw ValidationError("--friends must be at least 0 and less than --users")
        }
        if let storageURL = storage.storageURL, let problem = StorageConfiguration.problem(url: storageURL) {
            throw ValidationError("--storage-url: \(problem)")
        }
        if storage.storageURL != nil && storage.data != nil {
            throw ValidationError("--storage-url and --data exclude each other")
        }
        guard FixturePlan(users: users, friends: friends, graph: graph) != nil else {
            throw ValidationError("--graph must be random or clustered")
        }
        guard !prefix.isEmpty, prefix.utf8.count <= 20,
            prefix.utf8.allSatisfy({
                ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F || $0 == 0x2E
            })
        else {
            throw ValidationError("--prefix must be 1–20 characters of a-z, 0-9, '_' and '.'")
        }
    }

    func run() throws {
        CommandLogging.bootstrap()
        let plan = FixturePlan(users: users, friends: friends, graph: graph, seed: seed, prefix: prefix)!
        let directory: String
        switch try storage.resolve(creating: true) {
        case .shared(let url):
            try seedShared(plan, url: url)
            return
        case .dataDirectory(let path): directory = path
        }
        let data: Maintenance
        do {
            data = try Maintenance(dataDirectory: directory, access: .exclusive(purpose: "cairn seed"))
        } catch {
            throw CommandFailure("\(error)")
        }
        // A tokens file that cannot be written must fail before any user is created.
        let tokens = try TokensFile(path: out)
        let started = Date()
        let file: FixtureFile
        do {
            file = try runBlocking { try await data.seed(plan) }
        } catch MaintenanceError.usernameTaken {
            throw CommandFailure("users with prefix '\(prefix)' already exist in \(directory); choose another --prefix")
        }
        try data.close()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try tokens.write(encoder.encode(file))
        let pairs = file.users.reduce(0) { $0 + $1.friends.count } / 2
        print(
            "seeded \(file.users.count) users and \(pairs) friendships into \(directory) in "
                + String(format: "%.1f s", Date().timeIntervalSince(started)) + "; tokens in \(out)")
    }
}

extension Seed {
    /// The same fixtures in the shared PostgreSQL database (several nodes' load test); run before the nodes start.
    func seedShared(_ plan: FixturePlan, url: String) throws {
        let tokens = try TokensFile(path: out)
        let started = Date()
        let file: FixtureFile
        do {
            file = try runBlocking { try await Maintenance.seed(plan, storageURL: url) }
        } catch MaintenanceError.usernameTaken {
            throw CommandFailure(
                "users with prefix '\(prefix)' already exist in that database; choose another --prefix")
        } catch let error as MaintenanceError {
            throw CommandFailure("\(error)")
        } catch {
            throw CommandFailure("cannot seed the shared store: \(error)")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try tokens.write(encoder.encode(file))
        let pairs = file.users.reduce(0) { $0 + $1.friends.count } / 2
        print(
            "seeded \(file.users.count) users and \(pairs) friendships into the shared store in "
                + String(format: "%.1f s", Date().timeIntervalSince(started)) + "; tokens in \(out)")
    }
}

/// The tokens file, opened (mode 0600, owner only: it holds bearer tokens) before anything is seeded.
struct TokensFile {
    let path: String
    private let descriptor: Int32

    init(path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CommandFailure("cannot write \(path): \(String(cString: strerror(errno)))") }
        // An existing file keeps its mode on open: narrow it too.
        guard fchmod(fd, 0o600) == 0 else {
            close(fd)
            throw CommandFailure("cannot make \(path) private: \(String(cString: strerror(errno)))")
        }
        self.path = path
        descriptor = fd
    }

    /// Replaces the contents with `data` and closes the file.
    func write(_ data: Data) throws {
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: data)
            try handle.close()
        } catch {
            throw CommandFailure("cannot write \(path): \(error.localizedDescription)")
        }
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
