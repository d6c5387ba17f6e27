// Everything a run needs besides the workload: which server, where, how fast, for how long. Load is only ever
// sent to loopback (127.0.0.0/8); the configuration refuses any other address before a socket exists. A Cairn run may
// spread its users over several nodes (`ports`): user i connects to node i mod N, so who shares a node with whom is
// fixed by the order of the tokens file, and every delivery is either same-node or cross-node (`DeliveryPath`).
import Foundation

/// The server a run drives.
public enum ServerKind: String, Sendable, Codable, CaseIterable {
    /// Cairn over WebSocket (`cairn.v1`).
    case cairn
    /// Mosquitto over MQTT 3.1.1: each user publishes to `pos/<id>` and subscribes to its friends' topics.
    case mosquitto
    /// nginx's nchan module over WebSocket: one connection per user to `/ps/<id>?f=<friend ids>`, publishing to the
    /// user's own channel and subscribed to its friends' channels at once (`loadtest/nchan/nginx.conf.in`).
    case nchan
}

/// Where a delivery went: between two users on one node, or from one node to another (through Redis for Cairn).
public enum DeliveryPath: String, Sendable, Codable, CaseIterable {
    /// Sender and watcher are connected to the same node.
    case sameNode
    /// Sender and watcher are connected to different nodes.
    case crossNode
}

/// Why a configuration is refused.
public enum LoadConfigurationError: Error, Equatable, CustomStringConvertible {
    /// The host is not a 127.x.y.z literal.
    case notLoopback(String)
    /// A number is out of range.
    case outOfRange(String)

    /// A sentence for the command line.
    public var description: String {
        switch self {
        case .notLoopback(let h): "refusing \(h): load is only sent to loopback addresses (127.0.0.0/8)"
        case .outOfRange(let m): m
        }
    }
}

/// How a run is driven.
public struct LoadConfiguration: Sendable, Equatable {
    /// Cairn or Mosquitto.
    public var server: ServerKind
    /// Server address: an IPv4 literal in 127.0.0.0/8.
    public var host: String = "127.0.0.1"
    /// The ports of the nodes, one or more (all on `host`); user i connects to `ports[i % ports.count]`.
    public var ports: [Int]
    /// The port of the first (or only) node; setting it makes the run single-node on that port.
    public var port: Int {
        get { ports[0] }
        set { ports = [newValue] }
    }
    /// WebSocket path: Cairn's endpoint, or the prefix nchan's per-user path starts with (the user id follows).
    public var path: String = "/ws"
    /// Reports per second per user.
    public var rate: Double = 1
    /// Seconds of measured reporting.
    public var duration: Double = 10
    /// New connections started per second.
    public var rampPerSecond: Double = 1000
    /// Connection attempts in flight at once, at most.
    public var maxPendingConnects: Int = 256
    /// Seconds to wait, after the last connection attempt, for every user to be ready before measuring anyway.
    public var readyTimeout: Double = 10
    /// Seconds to keep reading after the last report, so deliveries in flight are counted.
    public var drain: Double = 1
    /// Source addresses to spread connections over (127.0.0.2, .3, …); 0 picks one per 20,000 users beyond the first.
    public var sourceAddresses: Int = 0
    /// The servers' pids (one per node, in any order), when they run here, for CPU and memory figures from /proc.
    public var serverPIDs: [Int32] = []
    /// The pid of the only server; setting it replaces the list.
    public var serverPID: Int32? {
        get { serverPIDs.first }
        set { serverPIDs = newValue.map { [$0] } ?? [] }
    }
    /// Print a progress line every second (stderr).
    public var progress: Bool = true

    /// A configuration with defaults for everything but the server and port.
    public init(server: ServerKind, port: Int) {
        self.init(server: server, ports: [port])
    }

    /// A configuration spreading users over the nodes listening on `ports` (see `node(ofUser:)`).
    public init(server: ServerKind, ports: [Int]) {
        self.server = server
        self.ports = ports
        if server == .nchan { path = "/ps/" }
    }

    /// The most nodes a run may spread its users over.
    public static let maxNodes = 64

    /// Checks ranges and that the host is loopback.
    public func validate() throws(LoadConfigurationError) {
        guard Self.isLoopback(host) else { throw .notLoopback(host) }
        guard !ports.isEmpty else { throw .outOfRange("give at least one port") }
        guard ports.count <= Self.maxNodes else { throw .outOfRange("at most \(Self.maxNodes) ports") }
        guard ports.allSatisfy({ (1...65535).contains($0) }) else { throw .outOfRange("port must be 1...65535") }
        guard Set(ports).count == ports.count else { throw .outOfRange("each port may be given only once") }
        guard server == .cairn || ports.count == 1 else {
            throw .outOfRange("several ports (nodes) are for cairn only; \(server.rawValue) takes one --port")
        }
        guard rate > 0 && rate <= 100 else { throw .outOfRange("rate must be in (0, 100] reports per second") }
        guard duration > 0 && duration <= 3600 else { throw .outOfRange("duration must be in (0, 3600] seconds") }
        guard rampPerSecond > 0 else { throw .outOfRange("ramp must be positive") }
        guard maxPendingConnects >= 1 else { throw .outOfRange("max pending connects must be at least 1") }
        guard sourceAddresses >= 0 && sourceAddresses <= 250 else {
            throw .outOfRange("source addresses must be 0...250")
        }
        guard readyTimeout >= 0 && drain >= 0 else { throw .outOfRange("timeouts must not be negative") }
    }

    /// Number of nodes.
    public var nodeCount: Int { ports.count }

    /// The node user `index` connects to: `index mod nodeCount` (users are dealt round-robin, in tokens-file order).
    public func node(ofUser index: Int) -> Int { index % ports.count }

    /// The port user `index` connects to.
    public func port(ofUser index: Int) -> Int { ports[node(ofUser: index)] }

    /// Whether a delivery from `sender` to `watcher` (user indexes) stays on one node or crosses between two.
    public func path(from sender: Int, to watcher: Int) -> DeliveryPath {
        node(ofUser: sender) == node(ofUser: watcher) ? .sameNode : .crossNode
    }

    /// `host:port`, or `host:port1,port2,…` for several nodes.
    public var address: String { "\(host):" + ports.map(String.init).joined(separator: ",") }

    /// Parses a `--ports` list: comma-separated decimal ports (spaces around them allowed), at least one, each
    /// 1...65535, none twice, at most `maxNodes`.
    public static func parsePorts(_ text: String) throws(LoadConfigurationError) -> [Int] {
        let items = text.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        var ports: [Int] = []
        for item in items {
            guard !item.isEmpty, item.count <= 5, item.allSatisfy({ $0 >= "0" && $0 <= "9" }), let port = Int(item),
                (1...65535).contains(port)
            else {
                throw .outOfRange(
                    "--ports must be comma-separated ports 1...65535, like 7681,7682,7683 (got '\(item)')")
            }
            guard !ports.contains(port) else { throw .outOfRange("--ports lists \(port) twice") }
            ports.append(port)
        }
        guard ports.count <= maxNodes else { throw .outOfRange("--ports takes at most \(maxNodes) ports") }
        return ports
    }

    /// Whether `host` is a dotted-quad IPv4 literal in 127.0.0.0/8.
    public static func isLoopback(_ host: String) -> Bool {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        let octets = parts.compactMap { $0.count <= 3 && !$0.isEmpty ? UInt8($0) : nil }
        return octets.count == 4 && octets[0] == 127
    }

    /// How many source addresses `users` connections use.
    public func sourceAddressCount(users: Int) -> Int {
        sourceAddresses > 0 ? sourceAddresses : max(1, (users + 19_999) / 20_000)
    }

    /// The local address user `index` binds to, or nil for the default (a single source address).
    public func sourceAddress(user index: Int, users: Int) -> String? {
        let count = sourceAddressCount(users: users)
        guard count > 1 else { return nil }
        return "127.0.0.\(2 + index % count)"
    }
}
