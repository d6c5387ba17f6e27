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

    /// Whether something accepts connections on the loopback `port`.
    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
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
        var waited = 0
        while !Self.accepts(port) {
            try #require(server.isRunning, "nginx exited: \(server.output)")
            try #require(waited < 300, "nginx did not listen on \(port) within 30 s: \(server.output)")
            usleep(100_000)
            waited += 1
        }

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
