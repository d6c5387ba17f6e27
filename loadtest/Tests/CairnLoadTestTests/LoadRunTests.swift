// Whole runs against a real Cairn (`cairn seed`, then `cairn serve` as a subprocess), short and small: the report's
// figures add up (and it says how much time the hypervisor stole), and the tool ends by itself, with the right
// outcome and exit code, when the server is absent or goes away mid-run. Timing is never asserted; waits are
// generous and bounded.
import CairnLoadTest
import CairnTestSupport
import Foundation
import Glibc
import Testing

@Suite(.serialized, .timeLimit(.minutes(5))) struct LoadRunTests {
    /// A seeded data directory and its tokens file.
    final class Fixture {
        let data = NSTemporaryDirectory() + "cairn-lt-\(UUID().uuidString)"
        var tokens: String { data + "-tokens.json" }

        init(users: Int, friends: Int) throws {
            let seed = try TestServerProcess(arguments: [
                "seed", "--users", "\(users)", "--friends", "\(friends)",
                "--graph", "clustered", "--data", data, "--out", tokens,
            ])
            #expect(try seed.waitForExit(timeout: 60) == 0, "output: \(seed.output)")
        }

        func serve() throws -> (TestServerProcess, Int) {
            let server = try TestServerProcess(arguments: [
                "serve", "--host", "127.0.0.1", "--port", "0", "--data", data,
            ])
            return (server, try server.waitForListeningPort(timeout: 60))
        }

        deinit {
            try? FileManager.default.removeItem(atPath: data)
            try? FileManager.default.removeItem(atPath: tokens)
        }
    }

    /// The `cairn-loadtest` executable built beside `cairn`.
    static func loadTester() throws -> URL {
        try TestServerProcess.executableURL().deletingLastPathComponent().appendingPathComponent("cairn-loadtest")
    }

    /// A loopback port nobody listens on (bound, read, released).
    static func closedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { p in
            try p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                guard bind(fd, $0, length) == 0, getsockname(fd, $0, &length) == 0 else {
                    throw POSIXError(.EADDRINUSE)
                }
            }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test func aShortRunsFiguresAddUp() throws {
        let fixture = try Fixture(users: 40, friends: 3)
        let (server, port) = try fixture.serve()
        var configuration = LoadConfiguration(server: .cairn, port: port)
        configuration.rate = 5
        configuration.duration = 2
        configuration.progress = false
        configuration.serverPID = server.pid
        let workload = try Workload.fromTokens(
            try TokensFile.load(path: fixture.tokens),
            plan: WorkloadPlan(users: 40, friends: 3, seed: 7))
        let report = WebSocketTransport(session: LoadSession(workload: workload, configuration: configuration)).run()
        server.signal(SIGTERM)
        _ = try? server.waitForExit(timeout: 20)

        let c = report.counters
        #expect(report.outcome == .completed, "\(report.summary())")
        #expect(c.connected == 40 && c.ready == 40)
        #expect(c.positionsSent > 0)
        #expect(report.perSecond.reduce(0) { $0 + $1.sends } == c.positionsSent)
        #expect(report.perSecond.reduce(0) { $0 + $1.deliveries } == c.deliveries)
        #expect(c.deliveries > 0 && c.deliveries <= c.expectedDeliveries)
        #expect(c.expectedDeliveries <= c.positionsSent * 3)  // nobody has more than 3 friends here
        #expect(c.messagesReceived >= c.deliveries + c.ready)  // every delivery and every watch reply was read
        #expect(c.messagesSent == c.positionsSent + c.ready)  // a watch per user, then the reports
        #expect(report.latency.count == UInt64(c.deliveries))
        let l = report.latency
        #expect(0 < l.p50 && l.p50 <= l.p90 && l.p90 <= l.p99 && l.p99 <= l.p999 && l.p999 <= l.max)
        #expect(abs(report.deliveriesPerSecond * report.windowSeconds - Double(c.deliveries)) < 1)
        let cost = try #require(report.serverCost)
        #expect(cost.cpuSeconds > 0 && cost.peakRssKiB > 0)
        // The tester's own CPU over the window is part of the run's, and the run's is more than nothing.
        let own = report.clientCost
        #expect(own.windowCpuSeconds > 0 && own.windowCpuSeconds <= own.cpuSeconds)
        // Stolen time: a share per CPU of the window and of each second closed in it, each within 0...1.
        let cpus = try #require(StolenTime.sample()).ticks.count
        let stolen = try #require(report.stolen)
        #expect(stolen.count == cpus && stolen.allSatisfy { (0...1).contains($0) })
        let secondsStolen = report.perSecond.compactMap(\.stolen)
        #expect(secondsStolen.count >= report.perSecond.count - 1)  // second 0 may close before the window opens
        #expect(secondsStolen.allSatisfy { $0.count == cpus && $0.allSatisfy { (0...1).contains($0) } })
        #expect(report.summary().contains("stolen time"))
        let decoded = try JSONDecoder().decode(LoadReport.self, from: try report.json())
        #expect(decoded.counters == c)
        #expect(decoded.stolen == report.stolen && decoded.perSecond == report.perSecond)
        #expect(report.summary().contains("\(c.deliveries) of \(c.expectedDeliveries) expected"))
    }

    @Test func aClosedPortEndsTheRunAsUnreachable() throws {
        let port = try Self.closedPort()
        var configuration = LoadConfiguration(server: .cairn, port: port)
        configuration.progress = false
        let workload = try Workload.fromTokens(
            TokensFile(
                shape: "random", friendsPerUser: 0, seed: 1,
                users: (1...5).map { .init(id: Int64($0), username: "u\($0)", token: "t", friends: []) }),
            plan: WorkloadPlan(users: 5, friends: 0))
        let report = WebSocketTransport(session: LoadSession(workload: workload, configuration: configuration)).run()
        #expect(report.outcome == .unreachable)
        #expect(report.counters.connected == 0 && report.counters.connectFailures >= 1)

        let mosquitto = MosquittoTransport(
            session: LoadSession(
                workload: workload,
                configuration: {
                    var c = configuration
                    c.server = .mosquitto
                    return c
                }())
        ).run()
        #expect(mosquitto.outcome == .unreachable)
    }

    @Test func theExecutableExitsWithCodeTwoWhenNothingListens() throws {
        let port = try Self.closedPort()
        let tool = try TestServerProcess(
            executable: Self.loadTester(),
            arguments: [
                "--server", "mosquitto", "--port", "\(port)", "--users", "20", "--friends", "2", "--duration", "2",
                "--json", "-",
            ])
        #expect(try tool.waitForExit(timeout: 30) == 2, "output: \(tool.output)")
        #expect(tool.output.contains("\"outcome\" : \"unreachable\""))
        #expect(tool.output.contains("could not connect"))
    }

    @Test func theExecutableRefusesAnAddressOffLoopback() throws {
        let tool = try TestServerProcess(
            executable: Self.loadTester(),
            arguments: [
                "--server", "mosquitto", "--host", "192.0.2.1", "--port", "1883", "--users", "2",
            ])
        #expect(try tool.waitForExit(timeout: 30) != 0)
        #expect(tool.output.contains("loopback"))
    }

    @Test func theServerGoingAwayMidRunEndsTheRunWithItsReport() throws {
        let fixture = try Fixture(users: 30, friends: 2)
        let (server, port) = try fixture.serve()
        let tool = try TestServerProcess(
            executable: Self.loadTester(),
            arguments: [
                "--port", "\(port)", "--tokens", fixture.tokens, "--rate", "2", "--duration", "60",
            ])
        _ = try tool.waitForLine(containing: "measure", timeout: 60)  // the progress line once reporting started
        server.signal(SIGTERM)
        #expect(try server.waitForExit(timeout: 20) == 0)
        #expect(try tool.waitForExit(timeout: 30) == 3, "output: \(tool.output)")
        #expect(tool.output.contains("serverClosed"))
        #expect(tool.output.contains("1001×30"))  // every connection was closed with "going away"
    }
}
