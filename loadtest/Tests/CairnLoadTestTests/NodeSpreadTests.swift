// Several nodes: `--ports` lists are parsed strictly, users are dealt to nodes round-robin (user i on node i mod N),
// and the session files every expected and every received delivery under same-node or cross-node, by where the
// sender and the watcher are connected. The session is driven by hand through a transport that opens no socket, so
// the split is checked without a server and without timing.
import CairnLoadTest
import Foundation
import Testing

@Suite(.timeLimit(.minutes(5)))
struct NodeSpreadTests {
    @Test func portListsAreParsed() throws {
        #expect(try LoadConfiguration.parsePorts("7681,7682,7683") == [7681, 7682, 7683])
        #expect(try LoadConfiguration.parsePorts(" 7683 , 7681") == [7683, 7681])
        #expect(try LoadConfiguration.parsePorts("9") == [9])
        for bad in ["", ",", "7681,", "7681,,7682", "abc", "7681;7682", "0", "65536", "-1", "+80", "7681 7682", "1e3"] {
            #expect(throws: LoadConfigurationError.self, "\(bad)") { try LoadConfiguration.parsePorts(bad) }
        }
        #expect(throws: LoadConfigurationError.outOfRange("--ports lists 7681 twice")) {
            try LoadConfiguration.parsePorts("7681,7682,7681")
        }
        let many = (1...(LoadConfiguration.maxNodes + 1)).map(String.init).joined(separator: ",")
        #expect(throws: LoadConfigurationError.self) { try LoadConfiguration.parsePorts(many) }
    }

    @Test func severalPortsAreForCairnOnlyAndMustDiffer() throws {
        try LoadConfiguration(server: .cairn, ports: [7681, 7682, 7683]).validate()
        try LoadConfiguration(server: .mosquitto, ports: [1883]).validate()
        #expect(throws: LoadConfigurationError.self) {
            try LoadConfiguration(server: .mosquitto, ports: [1883, 1884]).validate()
        }
        #expect(throws: LoadConfigurationError.self) {
            try LoadConfiguration(server: .cairn, ports: [7681, 7681]).validate()
        }
        #expect(throws: LoadConfigurationError.self) { try LoadConfiguration(server: .cairn, ports: []).validate() }
        #expect(throws: LoadConfigurationError.self) {
            try LoadConfiguration(server: .cairn, ports: [7681, 70000]).validate()
        }
    }

    @Test func usersAreDealtToNodesRoundRobin() {
        let c = LoadConfiguration(server: .cairn, ports: [7681, 7682, 7683])
        #expect((0..<7).map { c.node(ofUser: $0) } == [0, 1, 2, 0, 1, 2, 0])
        #expect((0..<4).map { c.port(ofUser: $0) } == [7681, 7682, 7683, 7681])
        #expect(c.path(from: 0, to: 3) == .sameNode)
        #expect(c.path(from: 4, to: 1) == .sameNode)
        #expect(c.path(from: 0, to: 1) == .crossNode)
        #expect(c.path(from: 5, to: 3) == .crossNode)
        #expect(c.address == "127.0.0.1:7681,7682,7683")
        let single = LoadConfiguration(server: .cairn, port: 7681)
        #expect(single.path(from: 0, to: 1) == .sameNode && single.path(from: 2, to: 7) == .sameNode)
        #expect(single.address == "127.0.0.1:7681")
    }

    /// Accepts every connection at once and remembers which users have a report due.
    final class HandTransport: LoadTransport {
        var due = Set<Int>()
        func connect(user: Int) -> Bool { true }
        func reportDue(user: Int) { due.insert(user) }
    }

    /// Every user reports once and each of its friends receives it; the report's per-path figures are compared with
    /// a count made here from the users' indexes (user i on node i mod `nodes`).
    func runByHand(nodes: Int) throws -> (report: LoadReport, same: Int, cross: Int) {
        let workload = try Workload.generate(WorkloadPlan(users: 12, friends: 4, seed: 3))
        var configuration = LoadConfiguration(server: .cairn, ports: (0..<nodes).map { 7681 + $0 })
        configuration.rate = 100
        configuration.duration = 60
        configuration.rampPerSecond = 1e9
        configuration.progress = false
        let session = LoadSession(workload: workload, configuration: configuration, output: { _ in })
        let transport = HandTransport()
        session.tick(transport)  // every connection started
        for user in 0..<workload.count {
            session.established(user: user)
            session.ready(user: user)
        }
        session.tick(transport)  // all ready: the window begins
        // Each user's first report falls due within one period (10 ms); bounded, never asserted on time.
        let deadline = Date().addingTimeInterval(30)
        while transport.due.count < workload.count && Date() < deadline {
            session.tick(transport)
            usleep(500)
        }
        try #require(transport.due.count == workload.count)
        var same = 0
        var cross = 0
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 128)
        defer { buffer.deallocate() }
        for user in 0..<workload.count {
            let length = session.writeReport(user: user, to: buffer)
            try #require(length > 0)
            let line = UnsafeRawBufferPointer(start: buffer, count: length)
            let ts = try #require(ServerLineScanner.integer(after: "\"ts\":", in: line))
            for friend in workload.friends[user] {
                if Int(friend) % nodes == user % nodes { same += 1 } else { cross += 1 }
                session.delivered(to: Int(friend), owner: workload.ids[user], ts: ts)
            }
        }
        session.abort(.completed, "ended by the test")
        return (session.report(), same, cross)
    }

    @Test func deliveriesAreSplitIntoSameNodeAndCrossNode() throws {
        let (report, same, cross) = try runByHand(nodes: 3)
        #expect(same > 0 && cross > 0)  // the graph has both kinds, or the test would prove little
        #expect(report.ports == [7681, 7682, 7683])
        #expect(report.byPath.map(\.path) == [.sameNode, .crossNode])
        let (s, c) = (report.byPath[0], report.byPath[1])
        #expect(s.deliveries == same && s.expectedDeliveries == same)
        #expect(c.deliveries == cross && c.expectedDeliveries == cross)
        #expect(s.latency.count == UInt64(same) && c.latency.count == UInt64(cross))
        #expect(report.counters.deliveries == same + cross)
        #expect(report.counters.expectedDeliveries == same + cross)
        #expect(s.deliveredShare == 1 && c.deliveredShare == 1)
        #expect(report.summary().contains("cross-node ms"))
        let decoded = try JSONDecoder().decode(LoadReport.self, from: try report.json())
        #expect(decoded.byPath[1].deliveries == cross)
    }

    @Test func oneNodeMakesEveryDeliverySameNode() throws {
        let (report, same, cross) = try runByHand(nodes: 1)
        #expect(cross == 0)
        #expect(report.byPath[0].deliveries == same && report.byPath[1].deliveries == 0)
        #expect(report.byPath[1].expectedDeliveries == 0 && report.byPath[1].deliveredShare == 1)
        #expect(!report.summary().contains("cross-node ms"))
    }
}
