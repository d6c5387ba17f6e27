// A real PostgreSQL server (Debian's) for the shared-store tests: one per test process, started on first use with
// `initdb` and `postgres` on a free loopback port in a temporary directory, trust authentication, and durability off
// (fsync) because tests do not survive power loss. Each test takes a schema of its own (`freshURL`), so tests run in
// parallel without seeing each other's rows and without the cost of a database each. PostgreSQL refuses to run as
// root: under root (CI) both programs run as the `postgres` account the Debian package creates. A small shell
// watchdog stops the server when the test process is gone, however it ended. A test that freezes its server (SIGSTOP
// on the postmaster and every backend: a stalled disk or a paused VM, as clients see it) starts one of its own
// (`dedicated`), so no other test waits on it.
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The test process's PostgreSQL server.
public final class PostgresServerProcess: @unchecked Sendable {
    /// The port it listens on.
    public let port: Int
    private let directory: String
    private let bin: String
    private let lock = NSLock()
    private var schemas = 0

    /// The directory holding PostgreSQL's programs, if it is installed.
    static let binDirectory: String? = {
        let fm = FileManager.default
        let versions = (try? fm.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for version in versions.sorted(by: >) {
            let bin = "/usr/lib/postgresql/\(version)/bin"
            if fm.isExecutableFile(atPath: bin + "/postgres") && fm.isExecutableFile(atPath: bin + "/initdb") {
                return bin
            }
        }
        return nil
    }()

    /// True when PostgreSQL's server programs are installed (tests that need them are skipped otherwise).
    public static var isAvailable: Bool { binDirectory != nil }

    /// The server, started on first use.
    public static let shared: Result<PostgresServerProcess, any Error> = Result { try PostgresServerProcess() }

    /// A server of the caller's own, for a test that freezes it; stopped when the test process ends.
    public static func dedicated() throws -> PostgresServerProcess { try PostgresServerProcess() }

    /// A URL to a new, empty schema of the shared server (the search path of every connection made with it).
    public static func freshURL() throws -> String { try shared.get().freshURL() }

    private init() throws {
        guard let bin = Self.binDirectory else {
            throw TestServerError.launchFailed(executable: "postgres", reason: "PostgreSQL is not installed")
        }
        self.bin = bin
        port = try RedisServerProcess.freePort()
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-pg-\(getpid())-\(port)")
        directory = base.path
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let asRoot = geteuid() == 0
        if asRoot { try Self.run("/bin/chown", ["postgres:postgres", directory]) }
        let user = asRoot ? ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--clear-groups"] : []
        try Self.run(
            user.first ?? bin + "/initdb",
            Array(user.dropFirst()) + (asRoot ? [bin + "/initdb"] : [])
                + ["-D", directory + "/data", "-U", "cairn", "-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C"])
        let server =
            ([bin + "/postgres"] + [
                "-D", directory + "/data", "-p", "\(port)", "-k", directory,
                "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "full_page_writes=off",
                "-c", "max_connections=400", "-c", "shared_buffers=32MB",
            ]).map { "'\($0)'" }.joined(separator: " ")
        let start = (user.map { "'\($0)'" } + [server]).joined(separator: " ")
        // The watchdog: the server in the background, stopped (fast shutdown) once the test process has gone.
        let script = """
            \(start) > '\(directory)/server.log' 2>&1 &
            child=$!
            while kill -0 \(getpid()) 2>/dev/null && kill -0 $child 2>/dev/null; do sleep 1; done
            for p in $(ps -o pid= --ppid $child) $child; do kill -CONT $p 2>/dev/null; done
            kill -INT $child 2>/dev/null; wait $child; rm -rf '\(directory)'
            """
        let watchdog = Process()
        watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
        watchdog.arguments = ["-c", script]
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        try watchdog.run()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if (try? Self.run(bin + "/pg_isready", ["-q", "-h", "127.0.0.1", "-p", "\(port)"])) != nil { return }
            usleep(50_000)
        }
        let log = (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
        throw TestServerError.launchFailed(executable: bin + "/postgres", reason: log)
    }

    /// Freezes the server (SIGSTOP to the postmaster, then to every process it started): connections stay open and
    /// the kernel still accepts new ones and takes their bytes, but nothing answers.
    public func pause() throws {
        let postmaster = try self.postmaster()
        kill(postmaster, SIGSTOP)
        for child in Self.children(of: postmaster) { kill(child, SIGSTOP) }
    }

    /// Lets a frozen server run again (its backends first, then the postmaster).
    public func resume() throws {
        let postmaster = try self.postmaster()
        for child in Self.children(of: postmaster) { kill(child, SIGCONT) }
        kill(postmaster, SIGCONT)
    }

    /// The postmaster's process id, from its pid file.
    private func postmaster() throws -> pid_t {
        let text = try String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8)
        guard let first = text.split(separator: "\n").first, let pid = pid_t(first), pid > 0 else {
            throw TestServerError.launchFailed(executable: "postgres", reason: "no postmaster.pid")
        }
        return pid
    }

    /// The processes whose parent is `parent` (from /proc).
    private static func children(of parent: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            // After "pid (name) ": the state, then the parent's id.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == parent ? pid : nil
        }
    }

    /// A new schema and a URL whose connections use it.
    public func freshURL() throws -> String {
        let schema: String = lock.withLock {
            schemas += 1
            return "t\(schemas)"
        }
        try Self.run(
            bin + "/psql",
            [
                "-q", "-h", "127.0.0.1", "-p", "\(port)", "-U", "cairn", "-d", "postgres",
                "-c", "CREATE SCHEMA \(schema)",
            ])
        return url(schema: schema)
    }

    /// The URL of an existing schema.
    public func url(schema: String) -> String {
        "postgresql://cairn@127.0.0.1:\(port)/postgres?options=-csearch_path%3D\(schema)"
    }

    /// The schema a URL of `freshURL` uses.
    public static func schema(of url: String) -> String? {
        url.range(of: "search_path%3D").map { String(url[$0.upperBound...]) }
    }

    /// Runs PostgreSQL's client program `name` (pg_dump, pg_restore, psql) against this server as its user, with
    /// `arguments` after the connection's; throws with its output when it fails.
    public func client(_ name: String, _ arguments: [String]) throws {
        try Self.run(bin + "/" + name, ["-h", "127.0.0.1", "-p", "\(port)", "-U", "cairn"] + arguments)
    }

    /// Runs a program to its end; throws when it fails.
    private static func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestServerError.launchFailed(
                executable: executable, reason: String(decoding: text, as: UTF8.self))
        }
    }
}
