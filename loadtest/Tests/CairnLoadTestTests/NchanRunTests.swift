// A short run against a real nginx with the nchan module, started from loadtest/nchan/start.sh as compare.sh starts
// it: every user gets ready, every report reaches exactly the friends the graph names (nothing lost, nothing extra,
// no line the tester cannot read), and the sender is read from the message itself. Skipped where nginx or the module
// is not installed (`.ci/run` installs both). Timing is never asserted; waits are generous and bounded.
import CairnLoadTest
import CairnTestSupport
import Foundation
import Glibc
import Testing

/// Debian's nginx and its nchan module, where the package manager puts them.
enum NchanInstallation {
    static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx")
            && FileManager.default.fileExists(atPath: "/usr/lib/nginx/modules/ngx_nchan_module.so")
    }
}

@Suite(
    .serialized, .timeLimit(.minutes(5)),
    .enabled(if: NchanInstallation.isAvailable, "nginx or libnginx-mod-nchan is not installed"))
struct NchanRunTests {
    /// `loadtest/nchan/start.sh`, found from this file.
    static var startScript: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("nchan/start.sh").path
    }

    @Test func everyReportReachesExactlyTheFriendsItIsFor() throws {
        let port = try LoadRunTests.closedPort()
        let scratch = NSTemporaryDirectory() + "cairn-nchan-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let server = try TestServerProcess(
            executable: URL(fileURLWithPath: "/bin/bash"), arguments: [Self.startScript, "\(port)", scratch])
        defer {
            server.signal(SIGTERM)  // the master stops its worker; a SIGKILL would leave the worker behind
            _ = try? server.waitForExit(timeout: 20)
        }
        try ListeningPeer.wait(for: port, from: server, name: "nginx")

        let workload = try Workload.generate(WorkloadPlan(users: 24, friends: 3, seed: 3))
        var configuration = LoadConfiguration(server: .nchan, port: port)
        configuration.rate = 4
        configuration.duration = 2
        configuration.progress = false
        let report = WebSocketTransport(session: LoadSession(workload: workload, configuration: configuration)).run()

        #expect(report.outcome == .completed, "\(report.summary())")
        let c = report.counters
        #expect(c.connected == 24 && c.ready == 24)
        #expect(c.positionsSent > 0)
        #expect(c.deliveries > 0)
        #expect(c.deliveries == c.expectedDeliveries, "\(report.summary())")
        #expect(c.unmatched == 0 && c.errors == 0, "\(report.summary())")
        #expect(c.messagesReceived == c.deliveries)  // nchan answers a publisher with nothing
    }
}
