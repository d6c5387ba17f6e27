// Everything a run needs besides the workload: which server, where, how fast, for how long. Load is only ever
// sent to loopback (127.0.0.0/8); the configuration refuses any other address before a socket exists.

/// The server a run drives.
public enum ServerKind: String, Sendable, Codable, CaseIterable {
    /// Cairn over WebSocket (`cairn.v1`).
    case cairn
    /// Mosquitto over MQTT 3.1.1: each user publishes to `pos/<id>` and subscribes to its friends' topics.
    case mosquitto
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
    /// Server port.
    public var port: Int
    /// WebSocket path (Cairn).
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
    /// The server's pid, when it runs here, for CPU and memory figures from /proc.
    public var serverPID: Int32?
    /// Print a progress line every second (stderr).
    public var progress: Bool = true

    /// A configuration with defaults for everything but the server and port.
    public init(server: ServerKind, port: Int) {
        self.server = server
        self.port = port
    }

    /// Checks ranges and that the host is loopback.
    public func validate() throws(LoadConfigurationError) {
        guard Self.isLoopback(host) else { throw .notLoopback(host) }
        guard (1...65535).contains(port) else { throw .outOfRange("port must be 1...65535") }
        guard rate > 0 && rate <= 100 else { throw .outOfRange("rate must be in (0, 100] reports per second") }
        guard duration > 0 && duration <= 3600 else { throw .outOfRange("duration must be in (0, 3600] seconds") }
        guard rampPerSecond > 0 else { throw .outOfRange("ramp must be positive") }
        guard maxPendingConnects >= 1 else { throw .outOfRange("max pending connects must be at least 1") }
        guard sourceAddresses >= 0 && sourceAddresses <= 250 else {
            throw .outOfRange("source addresses must be 0...250")
        }
        guard readyTimeout >= 0 && drain >= 0 else { throw .outOfRange("timeouts must not be negative") }
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
