// Why this exists: some behaviour can only be tested against the real `cairn` binary in its own process —
// graceful shutdown on SIGTERM, surviving kill -9 and restart with the same database, command-line parsing, the
// startup banner. This launches it, captures everything it prints (stdout and stderr, interleaved, on a
// background thread), and offers bounded waits on its output and its exit, so a hung or crashing server fails a test
// with its own output attached instead of hanging the suite.
//
// Set CAIRN_TEST_ECHO_SERVER=1 to also copy the server's output to the test's stderr as it arrives.

public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A running `cairn` server process. It is killed (SIGKILL) when this object goes away.
///
/// `@unchecked Sendable`: the output and exit state are written by a reader thread and Foundation's termination
/// handler, so they live behind one NSCondition; everything else is immutable after init. That makes it safe to,
/// say, send a signal from another thread while a test thread waits for output.
public final class TestServerProcess: @unchecked Sendable {
    /// The launched process's id.
    public let pid: Int32
    /// The executable that was launched.
    public let executable: URL

    private let process: Process
    private let state: CapturedState

    /// The `cairn` executable built next to the running test binary (`.build/<triple>/debug/cairn`), or the path in
    /// the `CAIRN_EXECUTABLE` environment variable. Throws "build the cairn executable first (swift build)".
    public static func executableURL() throws -> URL {
        let fileManager = FileManager.default
        if let override = ProcessInfo.processInfo.environment["CAIRN_EXECUTABLE"], !override.isEmpty {
            if fileManager.isExecutableFile(atPath: override) { return URL(fileURLWithPath: override) }
            throw TestServerError.executableNotFound(searched: ["CAIRN_EXECUTABLE=\(override)"])
        }

        var starts: [URL] = []
        if let exe = try? fileManager.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            starts.append(URL(fileURLWithPath: exe))
        }
        if let argument = CommandLine.arguments.first, !argument.isEmpty {
            starts.append(
                URL(fileURLWithPath: argument, relativeTo: URL(fileURLWithPath: fileManager.currentDirectoryPath)))
        }
        starts.append(Bundle.main.bundleURL)
        if let executableURL = Bundle.main.executableURL { starts.append(executableURL) }

        var searched: [String] = []
        for start in starts {
            var directory = start.standardizedFileURL
            while true {
                let path = directory.path
                if !searched.contains(path) {
                    searched.append(path)
                    let candidate = directory.appendingPathComponent("cairn")
                    var isDirectory: ObjCBool = false
                    if fileManager.fileExists(atPath: candidate.path, isDirectory: &isDirectory),
                        !isDirectory.boolValue,
                        fileManager.isExecutableFile(atPath: candidate.path)
                    {
                        return candidate
                    }
                }
                let parent = directory.deletingLastPathComponent().standardizedFileURL
                if parent.path == directory.path || path == "/" { break }
                directory = parent
            }
        }
        throw TestServerError.executableNotFound(searched: searched)
    }

    /// Launches `cairn` (see `executableURL()`) with `arguments`; `environment` is added to the test's own. It runs
    /// in `directory`, else in the test's own working directory.
    public convenience init(
        arguments: [String], environment: [String: String] = [:], in directory: String? = nil
    ) throws {
        try self.init(
            executable: Self.executableURL(), arguments: arguments, environment: environment, in: directory)
    }

    /// Launches `executable` with `arguments`; `environment` is added to the test's own. Stdin is /dev/null.
    public init(
        executable: URL, arguments: [String], environment: [String: String] = [:], in directory: String? = nil
    ) throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory, isDirectory: true) }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        process.standardInput = FileHandle.nullDevice
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe

        let state = CapturedState()
        process.terminationHandler = { finished in
            let status = finished.terminationStatus
            state.recordExit(finished.terminationReason == .uncaughtSignal ? 128 + status : status)
        }
        do {
            try process.run()
        } catch {
            throw TestServerError.launchFailed(executable: executable.path, reason: "\(error)")
        }
        // Only the child may hold the write end, so that the reader sees end-of-file when the server exits.
        try? pipe.fileHandleForWriting.close()

        self.process = process
        self.state = state
        self.executable = executable
        pid = process.processIdentifier

        let echo = ProcessInfo.processInfo.environment["CAIRN_TEST_ECHO_SERVER"] == "1"
        let reader = Thread {
            let handle = pipe.fileHandleForReading
            var buffer = [UInt8](repeating: 0, count: 16384)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    let chunk = Array(buffer[0..<count])
                    if echo { FileHandle.standardError.write(Data(chunk)) }
                    state.append(chunk)
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            state.markEndOfOutput()
            try? handle.close()
        }
        reader.name = "cairn-output-reader"
        reader.start()
    }

    deinit {
        if state.exitStatus == nil {
            _ = Foundation.kill(pid, SIGKILL)
            _ = state.waitForExit(until: Date(timeIntervalSinceNow: 5))
        }
    }

    /// Everything the server has printed so far (stdout and stderr interleaved).
    public var output: String { state.text }

    /// Whether the process has not yet been seen to exit.
    public var isRunning: Bool { state.exitStatus == nil }

    /// The first output line (from the start of the output) that contains `text`. Throws
    /// `TestServerError.lineNotFound`, with the whole output, if the process exits or `timeout` seconds pass first.
    @discardableResult
    public func waitForLine(containing text: String, timeout: Double) throws -> String {
        let deadline = Date(timeIntervalSinceNow: timeout)
        if let line = state.waitForLine(containing: text, until: deadline) { return line }
        throw TestServerError.lineNotFound(text: text, exitStatus: state.exitStatus, output: state.text)
    }

    /// Waits for the `cairn listening on 127.0.0.1:54321` line and returns the port (useful with port 0).
    public func waitForListeningPort(timeout: Double = 20) throws -> Int {
        let line = try waitForLine(containing: "listening on", timeout: timeout)
        guard let port = Self.port(inListeningLine: line) else { throw TestServerError.unparsableListeningLine(line) }
        return port
    }

    /// The port in a line such as "... listening on 127.0.0.1:54321 ...".
    static func port(inListeningLine line: String) -> Int? {
        guard let range = line.range(of: "listening on") else { return nil }
        for token in line[range.upperBound...].split(separator: " ") {
            let candidate = token.split(separator: ":").last.map(String.init) ?? ""
            let digits = candidate.prefix { $0.isNumber }
            if !digits.isEmpty, let port = Int(digits), (1...65535).contains(port) { return port }
        }
        return nil
    }

    /// Sends `sig` (e.g. SIGTERM, SIGINT, SIGHUP) to the server, unless it has already exited.
    public func signal(_ sig: Int32) {
        guard state.exitStatus == nil else { return }
        _ = Foundation.kill(pid, sig)
    }

    /// Sends SIGKILL, unless the server has already exited.
    public func kill() {
        signal(SIGKILL)
    }

    /// Waits for the process to exit and returns its exit status; a process ended by a signal reports
    /// 128 + the signal number (e.g. 137 after `kill()`, 143 for an unhandled SIGTERM).
    /// Throws `TestServerError.exitTimeout` if it is still running after `timeout` seconds.
    @discardableResult
    public func waitForExit(timeout: Double) throws -> Int32 {
        if let status = state.waitForExit(until: Date(timeIntervalSinceNow: timeout)) { return status }
        throw TestServerError.exitTimeout(seconds: timeout, output: state.text)
    }
}

/// Output and exit status shared between the reader thread, the termination handler and the test thread.
private final class CapturedState: @unchecked Sendable {
    private let condition = NSCondition()
    private var bytes: [UInt8] = []
    private var outputEnded = false
    private var status: Int32?

    var text: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: bytes, as: UTF8.self)
    }

    var exitStatus: Int32? {
        condition.lock()
        defer { condition.unlock() }
        return status
    }

    func append(_ chunk: [UInt8]) {
        condition.lock()
        bytes += chunk
        condition.broadcast()
        condition.unlock()
    }

    func markEndOfOutput() {
        condition.lock()
        outputEnded = true
        condition.broadcast()
        condition.unlock()
    }

    func recordExit(_ value: Int32) {
        condition.lock()
        status = value
        condition.broadcast()
        condition.unlock()
    }

    /// Waits for the exit status; then, so that `text` holds everything the process printed, for the reader to
    /// reach the end of the output (at most one more second: a child could keep the pipe open).
    func waitForExit(until deadline: Date) -> Int32? {
        condition.lock()
        defer { condition.unlock() }
        while status == nil {
            if !condition.wait(until: deadline) && Date() >= deadline { break }
        }
        let outputDeadline = Date(timeIntervalSinceNow: 1)
        while status != nil && !outputEnded && Date() < outputDeadline {
            _ = condition.wait(until: outputDeadline)
        }
        return status
    }

    /// Waits for a line containing `text`. Gives up at `deadline`, or once the process has exited and its output
    /// has ended (allowing one extra second after exit for the last output to be read).
    func waitForLine(containing text: String, until deadline: Date) -> String? {
        condition.lock()
        defer { condition.unlock() }
        var exitSeen: Date?
        while true {
            let all = String(decoding: bytes, as: UTF8.self)
            var lines = all.split(separator: "\n", omittingEmptySubsequences: false)
            if !outputEnded, !all.hasSuffix("\n") { lines = lines.dropLast() }  // the last line is still being written
            if let line = lines.first(where: { $0.contains(text) }) {
                return String(line).trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
            }
            if status != nil {
                if outputEnded { return nil }
                let seen = exitSeen ?? Date()
                exitSeen = seen
                if Date().timeIntervalSince(seen) > 1 { return nil }
            }
            if Date() >= deadline { return nil }
            _ = condition.wait(until: min(deadline, Date(timeIntervalSinceNow: 0.1)))
        }
    }
}
