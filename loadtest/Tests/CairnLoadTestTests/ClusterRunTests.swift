// The tester over several real nodes: `cairn seed --storage-url` into one PostgreSQL schema, two `cairn serve` nodes
// sharing it and one redis-server, then a short run with `--ports` over both. Every user's friends sit on both nodes,
// so deliveries arrive by both paths, and the report counts them apart. The command line refuses what it cannot
// use. Timing is never asserted; waits are generous and bounded.
import CairnLoadTest
import CairnTestSupport
import Foundation
import Glibc
import Testing

@Suite(.serialized, .timeLimit(.minutes(5))) struct ClusterRunTests {
    static var clusterAvailable: Bool { PostgresServerProcess.isAvailable && RedisServerProcess.isAvailable }

    @Test(.enabled(if: clusterAvailable, "PostgreSQL or redis-server is not installed"))
    func aRunOverTwoNodesCountsSameNodeAndCrossNodeDeliveries() throws {
        let url = try PostgresServerProcess.freshURL()
        let redis = try RedisServerProcess()
        let base = NSTemporaryDirectory() + "cairn-lt-cluster-\(UUID().uuidString)"
        let tokens = base + "-tokens.json"
        defer {
            for path in [tokens, base + "-a", base + "-b"] { try? FileManager.default.removeItem(atPath: path) }
        }
        let seed = try TestServerProcess(arguments: [
            "seed", "--users", "30", "--friends", "4", "--storage-url", url, "--out", tokens,
        ])
        #expect(try seed.waitForExit(timeout: 60) == 0, "output: \(seed.output)")
        var nodes: [(process: TestServerProcess, port: Int)] = []
        for name in ["a", "b"] {
            let node = try TestServerProcess(arguments: [
                "serve", "--host", "127.0.0.1", "--port", "0", "--data", base + "-" + name, "--storage-url", url,
                "--storage-connections", "2", "--redis-url", redis.url, "--cluster-node", name,
            ])
            nodes.append((node, try node.waitForListeningPort(timeout: 60)))
        }
        defer {
            for node in nodes {
                node.process.signal(SIGTERM)
                _ = try? node.process.waitForExit(timeout: 20)
            }
        }
        let json = base + "-report.json"
        defer { try? FileManager.default.removeItem(atPath: json) }
        let tool = try TestServerProcess(
            executable: LoadRunTests.loadTester(),
            arguments: [
                "--ports", nodes.map { String($0.port) }.joined(separator: ","), "--tokens", tokens,
                "--rate", "5", "--duration", "3", "--quiet", "--json", json,
                "--server-pid", "\(nodes[0].process.pid)", "--server-pid", "\(nodes[1].process.pid)",
            ])
        #expect(try tool.waitForExit(timeout: 90) == 0, "output: \(tool.output)")
        let report = try JSONDecoder().decode(LoadReport.self, from: Data(contentsOf: URL(fileURLWithPath: json)))
        #expect(report.ports == nodes.map(\.port))
        #expect(report.counters.ready == 30)
        let (same, cross) = (report.byPath[0], report.byPath[1])
        #expect(same.path == .sameNode && cross.path == .crossNode)
        #expect(same.deliveries > 0, "\(report.summary())")
        #expect(cross.deliveries > 0, "\(report.summary())")
        #expect(same.deliveries + cross.deliveries == report.counters.deliveries)
        #expect(same.expectedDeliveries + cross.expectedDeliveries == report.counters.expectedDeliveries)
        #expect(report.serverCosts.map(\.pid) == nodes.map(\.process.pid))
        #expect(report.serverCost == nil)
        #expect(tool.output.contains("cross-node ms"))
    }

    @Test func theExecutableRefusesBadPortLists() throws {
        let cases: [([String], String)] = [
            (["--port", "7681", "--ports", "7682,7683"], "exclude each other"),
            (["--ports", "7681,x"], "--ports"),
            (["--ports", "7681,7681"], "twice"),
            (["--server", "mosquitto", "--users", "2", "--ports", "1883,1884"], "cairn only"),
            (["--users", "2", "--server", "mosquitto"], "--port"),
        ]
        for (arguments, message) in cases {
            let tool = try TestServerProcess(executable: LoadRunTests.loadTester(), arguments: arguments)
            #expect(try tool.waitForExit(timeout: 30) != 0, "\(arguments)")
            #expect(tool.output.contains(message), "\(arguments): \(tool.output)")
        }
    }
}
