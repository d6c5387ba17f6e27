// The result of a run, for people (a summary table) and for machines (JSON with the same figures). Totals are kept
// so they can be checked against each other: the per-second deliveries add up to the total, the expected
// deliveries bound the delivered ones, and the percentiles never decrease.
public import Foundation

/// How a run ended.
public enum RunOutcome: String, Codable, Sendable {
    /// The measured window ran to its end.
    case completed
    /// No connection to the server could be made.
    case unreachable
    /// The server closed or dropped every connection before the end.
    case serverClosed
    /// The run overran its hard deadline (something never settled).
    case timedOut

    /// The process exit code for this outcome.
    public var exitCode: Int32 {
        switch self {
        case .completed: 0
        case .unreachable: 2
        case .serverClosed: 3
        case .timedOut: 4
        }
    }
}

/// One second of the measured window.
public struct SecondSample: Codable, Sendable, Equatable {
    /// Seconds since the window started.
    public var second: Int
    /// Positions sent in this second.
    public var sends: Int
    /// Deliveries received in this second.
    public var deliveries: Int
    /// 99th percentile latency of this second's deliveries, ms.
    public var p99: Double
    /// The share of this second the hypervisor took from each CPU (`StolenTime`); nil before the window, where
    /// /proc/stat is unreadable, and in reports made before it was recorded.
    public var stolen: [Double]? = nil
}

/// Counts of a run.
public struct RunCounters: Codable, Sendable, Equatable {
    /// Connection attempts made.
    public var connectAttempts = 0
    /// Connections established (WebSocket open, or MQTT CONNACK).
    public var connected = 0
    /// Users that became ready (watching, or subscribed).
    public var ready = 0
    /// Connection attempts that failed.
    public var connectFailures = 0
    /// Established connections that the server closed or that broke.
    public var disconnects = 0
    /// Error replies and events.
    public var errors = 0
    /// Messages written (requests, publishes).
    public var messagesSent = 0
    /// Messages read (events and replies; several may share a WebSocket frame).
    public var messagesReceived = 0
    /// WebSocket frames (or MQTT packets) read.
    public var framesReceived = 0
    /// Payload bytes written.
    public var bytesSent = 0
    /// Payload bytes read.
    public var bytesReceived = 0
    /// Positions reported in the measured window.
    public var positionsSent = 0
    /// Sum over those positions of the friends ready to receive them.
    public var expectedDeliveries = 0
    /// Positions received by a watching friend and matched to their send.
    public var deliveries = 0
    /// Position events that matched no remembered send (e.g. the last position from before the run).
    public var unmatched = 0
    /// Close codes the server sent, by code.
    public var closeCodes: [String: Int] = [:]
}

/// Everything a run measured.
public struct LoadReport: Codable, Sendable {
    /// What was driven.
    public struct Setup: Codable, Sendable {
        /// Server kind.
        public var server: ServerKind
        /// host:port.
        public var address: String
        /// Users.
        public var users: Int
        /// Friends per user asked for.
        public var friendsPerUser: Int
        /// Friendships in the graph.
        public var friendships: Int
        /// Graph shape.
        public var graph: String
        /// Workload seed.
        public var seed: UInt64
        /// Reports per second per user.
        public var rateHz: Double
        /// Measured window asked for, s.
        public var durationSeconds: Double
        /// Connections started per second.
        public var rampPerSecond: Double
        /// Travel mode mix.
        public var modes: String
        /// City box.
        public var box: CityBox
        /// Source addresses used.
        public var sourceAddresses: Int
    }

    /// The server's cost, when its pid was given.
    public struct ServerCost: Codable, Sendable {
        /// Pid.
        public var pid: Int32
        /// CPU seconds used during the run (from just before the first connection to the end of the window).
        public var cpuSeconds: Double
        /// CPU seconds used during the measured window only.
        public var windowCpuSeconds: Double
        /// Peak resident set over the process's life, KiB (VmHWM).
        public var peakRssKiB: Int
        /// Resident set before the first connection, KiB.
        public var baselineRssKiB: Int
        /// Resident set at the end of the window, KiB.
        public var loadedRssKiB: Int
        /// (loaded − baseline) / users ready at the end, bytes.
        public var bytesPerUser: Double
    }

    /// The deliveries of one `DeliveryPath`: between users on one node, or across nodes.
    public struct PathFigures: Codable, Sendable {
        /// Which path.
        public var path: DeliveryPath
        /// Deliveries on it, matched to their send.
        public var deliveries: Int
        /// Deliveries expected on it (each report × the sender's ready friends on that path).
        public var expectedDeliveries: Int
        /// deliveries / expectedDeliveries (1 when nothing was expected).
        public var deliveredShare: Double
        /// Send-to-delivery latency on it.
        public var latency: LatencySummary
    }

    /// The tool's own cost.
    public struct ClientCost: Codable, Sendable {
        /// CPU seconds used by this process.
        public var cpuSeconds: Double
        /// CPU seconds used by this process during the measured window only (the server's window, same instants).
        public var windowCpuSeconds: Double
        /// Peak resident set, KiB.
        public var peakRssKiB: Int
    }

    /// Format version of this report.
    public var version = 1
    /// How the run ended.
    public var outcome: RunOutcome
    /// A sentence on the outcome.
    public var message: String
    /// What was driven.
    public var setup: Setup
    /// Seconds the measured window lasted.
    public var windowSeconds: Double
    /// Counts.
    public var counters: RunCounters
    /// Positions sent per second in the window.
    public var sendsPerSecond: Double
    /// Deliveries per second in the window.
    public var deliveriesPerSecond: Double
    /// deliveries / expectedDeliveries (1 when nothing was expected).
    public var deliveredShare: Double
    /// Send-to-delivery latency.
    public var latency: LatencySummary
    /// Connect-call-to-established time.
    public var connectTime: LatencySummary
    /// The window second by second.
    public var perSecond: [SecondSample]
    /// Server cost, if one server pid was given.
    public var serverCost: ServerCost?
    /// Every given server pid's cost, in the order given (one per node when several).
    public var serverCosts: [ServerCost]
    /// The nodes' ports; user i connected to `ports[i % ports.count]`.
    public var ports: [Int]
    /// Same-node and cross-node deliveries (with one node every delivery is same-node), in `DeliveryPath` order.
    public var byPath: [PathFigures]
    /// The share of the window the hypervisor took from each CPU (`StolenTime`); nil where /proc/stat is unreadable
    /// and in reports made before it was recorded.
    public var stolen: [Double]? = nil
    /// Client cost.
    public var clientCost: ClientCost

    /// The report as pretty JSON.
    public func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(self)
    }

    /// A table for people.
    public func summary() -> String {
        func f(_ v: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", v) }
        let c = counters
        var rows: [(String, String)] = [
            ("outcome", "\(outcome.rawValue): \(message)"),
            ("server", "\(setup.server.rawValue) at \(setup.address)"),
            (
                "workload",
                "\(setup.users) users, \(setup.friendships) friendships (\(setup.graph), k=\(setup.friendsPerUser)), "
                    + "\(f(setup.rateHz, 1)) Hz, seed \(setup.seed)"
            ),
            ("window", "\(f(windowSeconds, 1)) s (asked \(f(setup.durationSeconds, 1)) s)"),
            (
                "connections",
                "\(c.connected)/\(c.connectAttempts) established, \(c.ready) ready, "
                    + "\(c.connectFailures) failed, \(c.disconnects) dropped"
            ),
            ("connect time ms", "p50 \(f(connectTime.p50)) p99 \(f(connectTime.p99)) max \(f(connectTime.max))"),
            ("positions sent", "\(c.positionsSent) (\(f(sendsPerSecond, 0))/s)"),
            (
                "deliveries",
                "\(c.deliveries) of \(c.expectedDeliveries) expected (\(f(deliveredShare * 100, 1))%), "
                    + "\(f(deliveriesPerSecond, 0))/s; \(c.unmatched) unmatched"
            ),
            (
                "latency ms",
                "p50 \(f(latency.p50)) p90 \(f(latency.p90)) p99 \(f(latency.p99)) "
                    + "p99.9 \(f(latency.p999)) max \(f(latency.max))"
            ),
            ("messages out/in", "\(c.messagesSent) / \(c.messagesReceived) (\(c.framesReceived) frames)"),
            ("bytes out/in", "\(c.bytesSent) / \(c.bytesReceived)"),
            (
                "errors",
                "\(c.errors)"
                    + (c.closeCodes.isEmpty
                        ? ""
                        : "; close codes "
                            + c.closeCodes.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(
                                separator: " "))
            ),
        ]
        if ports.count > 1 {
            for p in byPath {
                let l = p.latency
                rows.append(
                    (
                        p.path == .sameNode ? "same-node ms" : "cross-node ms",
                        "p50 \(f(l.p50)) p90 \(f(l.p90)) p99 \(f(l.p99)) p99.9 \(f(l.p999)) max \(f(l.max)); "
                            + "\(p.deliveries) of \(p.expectedDeliveries) (\(f(p.deliveredShare * 100, 1))%)"
                    ))
            }
        }
        if serverCost == nil && !serverCosts.isEmpty {
            for s in serverCosts {
                rows.append(
                    (
                        "server \(s.pid)",
                        "cpu \(f(s.cpuSeconds)) s (window \(f(s.windowCpuSeconds))), peak \(s.peakRssKiB) KiB"
                    ))
            }
        }
        if let s = serverCost {
            rows.append(("server cpu s", "\(f(s.cpuSeconds)) (window \(f(s.windowCpuSeconds)))"))
            rows.append(
                (
                    "server memory",
                    "peak \(s.peakRssKiB) KiB, \(s.baselineRssKiB) → \(s.loadedRssKiB) KiB, "
                        + "\(f(s.bytesPerUser / 1024, 1)) KiB per user"
                ))
        }
        if let stolen, !stolen.isEmpty {
            let shares = stolen.enumerated().map { cpu, share in
                let worst = perSecond.compactMap { $0.stolen.flatMap { cpu < $0.count ? $0[cpu] : nil } }.max() ?? 0
                return "cpu\(cpu) \(f(share * 100, 1))% (worst second \(f(worst * 100, 0))%)"
            }
            rows.append(("stolen time", shares.joined(separator: ", ")))
        }
        rows.append(
            (
                "load tester",
                "cpu \(f(clientCost.cpuSeconds)) s (window \(f(clientCost.windowCpuSeconds))), "
                    + "peak \(clientCost.peakRssKiB) KiB"
            ))
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 }
            .joined(separator: "\n")
    }
}
