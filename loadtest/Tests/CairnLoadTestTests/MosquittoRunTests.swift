// A short run of the `cairn-loadtest` tool against a real Mosquitto broker, with the tool's hard descriptor limit
// below three per user: it still connects every user and every report reaches exactly the friends it is for, because
// its clients are made without libmosquitto's socket pairs (one descriptor each). Kept, the pairs would exhaust the
// limit part-way through the ramp and the run would not complete. Skipped where the broker or libmosquitto1 is not
// installed (`.ci/run` installs both). Timing is never asserted; waits are generous and bounded.
import CairnLoadTest
import CairnTestSupport
import Foundation
import Glibc
import Testing

/// Debian's Mosquitto broker and its client library, where the package manager puts them.
enum MosquittoInstallation {
    static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/sbin/mosquitto")
            && ["x86_64", "aarch64"].contains {
                FileManager.default.fileExists(atPath: "/usr/lib/\($0)-linux-gnu/libmosquitto.so.1")
            }
    }
}

@Suite(
    .serialized, .timeLimit(.minutes(5)),
    .enabled(if: MosquittoInstallation.isAvailable, "mosquitto or libmosquitto1 is not installed"))
struct MosquittoRunTests {
    @Test func oneDescriptorPerUserIsEnoughForTheToolToDriveMosquitto() throws {
        let port = try LoadRunTests.closedPort()
        let scratch = NSTemporaryDirectory() + "cairn-mosquitto-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let conf = scratch + "/mosquitto.conf"
        try """
        listener \(port) 127.0.0.1
        allow_anonymous true
        persistence false
        max_connections -1
        set_tcp_nodelay true
        log_dest stderr
        log_type error

        """.write(toFile: conf, atomically: true, encoding: .utf8)
        let broker = try TestServerProcess(
            executable: URL(fileURLWithPath: "/usr/sbin/mosquitto"), arguments: ["-c", conf])
        defer {
            broker.kill()  // it keeps nothing (persistence false)
            _ = try? broker.waitForExit(timeout: 20)
        }
        try ListeningPeer.wait(for: port, from: broker, name: "mosquitto")

        // 90 users with their socket pairs would need 270 descriptors beside the tool's own; the limit is 200.
        let users = 90
        let report = scratch + "/report.json"
        let tool = try TestServerProcess(
            executable: URL(fileURLWithPath: "/bin/bash"),
            arguments: [
                "-c", "ulimit -n 200 && exec \"$0\" \"$@\"", try LoadRunTests.loadTester().path,
                "--server", "mosquitto", "--port", "\(port)", "--users", "\(users)", "--friends", "3",
                "--rate", "4", "--duration", "2", "--seed", "5", "--json", report,
            ])
        #expect(try tool.waitForExit(timeout: 120) == 0, "output: \(tool.output)")
        let run = try JSONDecoder().decode(LoadReport.self, from: try Data(contentsOf: URL(fileURLWithPath: report)))
        let c = run.counters
        #expect(run.outcome == .completed, "\(run.summary())")
        #expect(c.connected == users && c.ready == users)
        #expect(c.deliveries > 0)
        #expect(c.deliveries == c.expectedDeliveries, "\(run.summary())")
        #expect(c.unmatched == 0 && c.errors == 0, "\(run.summary())")
    }
}
