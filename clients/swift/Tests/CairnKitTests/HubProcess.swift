// Test support for the integration tests: a real `cairn serve` ($CAIRN_BIN) on 127.0.0.1 with a temporary data
// directory, which a test can kill and start again on the same port and data, as clients/js/test/hub.mjs does.
// Without CAIRN_BIN the integration tests are skipped with a message saying how to run them.
import Foundation
import XCTest

@testable import CairnKit

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A running hub.
final class HubProcess: @unchecked Sendable {
    let binary: String
    let data: URL
    private(set) var port = 0
    private var process: Process?
    private let lock = NSLock()
    private var output = ""

    /// The hub binary from CAIRN_BIN, or a skip.
    static func binary() throws -> String {
        guard let path = ProcessInfo.processInfo.environment["CAIRN_BIN"], !path.isEmpty else {
            throw XCTSkip(
                "CAIRN_BIN is not set: the integration tests start a real hub. Build it at the repository root "
                    + "(swift build) and run CAIRN_BIN=$PWD/.build/debug/cairn swift test in clients/swift.")
        }
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw XCTSkip("CAIRN_BIN=\(path) is not an executable")
        }
        return path
    }

    init() throws {
        binary = try Self.binary()
        data = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-swift-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
    }

    var url: URL { URL(string: "ws://127.0.0.1:\(port)/ws")! }
    var httpURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Starts `cairn serve` (on the port it had before, once it has one) and waits for /healthz.
    func start() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [
            "serve", "--host", "127.0.0.1", "--port", String(port), "--data", data.path, "--scrypt-cost", "10",
            "--signups-per-address", "0",
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        lock.locked { output = "" }
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let chunk = handle.availableData
            guard let self, !chunk.isEmpty else { return }
            self.lock.locked { self.output += String(decoding: chunk, as: UTF8.self) }
        }
        try process.run()
        self.process = process
        let deadline = ContinuousClock.now + .seconds(30)
        while port == 0 || !(lock.locked { output.contains("listening on") }) {
            if let found = listeningPort() { port = found }
            if port != 0, lock.locked({ output.contains("listening on") }) { break }
            guard process.isRunning, ContinuousClock.now < deadline else {
                throw HubError(message: "hub did not start:\n" + lock.locked { output })
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        try await waitHealthy(deadline: deadline)
    }

    private func listeningPort() -> Int? {
        let text = lock.locked { output }
        guard let range = text.range(of: #"listening on [^\s:]+:(\d+)"#, options: .regularExpression) else {
            return nil
        }
        return text[range].split(separator: ":").last.flatMap { Int($0.prefix { $0.isNumber }) }
    }

    private func waitHealthy(deadline: ContinuousClock.Instant) async throws {
        while ContinuousClock.now < deadline {
            if (try? await http(httpURL.appendingPathComponent("healthz")).status) == 200 { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw HubError(message: "the hub never answered /healthz")
    }

    /// Kills the hub with SIGKILL and waits for it to end.
    func kill() {
        guard let process, process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Stops the hub (SIGSTOP): its sockets stay open but nothing is answered, as when a network silently goes away.
    func freeze() {
        guard let process, process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGSTOP)
    }

    /// Lets a frozen hub run again (SIGCONT).
    func thaw() {
        guard let process, process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGCONT)
    }

    /// Kills the hub and removes its data directory.
    func dispose() {
        kill()
        try? FileManager.default.removeItem(at: data)
    }

    struct HubError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}

/// One HTTP request, for the tests' own calls (healthz, a tracker's report).
func http(_ url: URL) async throws -> (status: Int, body: Data) {
    try await withCheckedThrowingContinuation { continuation in
        URLSession.shared.dataTask(with: url) { data, response, error in
            if let error {
                continuation.resume(throwing: error)
            } else {
                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                continuation.resume(returning: (status, data ?? Data()))
            }
        }.resume()
    }
}
