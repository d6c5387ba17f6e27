// `[cluster]`: whether this hub is one of several nodes sharing presence (and, later, fan-out) through Redis.
// Without `redis_url` the hub is a single node exactly as before: no Redis code runs. The checks live here, next to
// the parser they use, so `cairn config check` and the hub's start refuse the same things with the same words.
import CairnCluster
import Foundation

/// The cluster settings of one node.
public struct ClusterConfiguration: Sendable, Equatable {
    /// `redis://host:port` of the Redis the nodes share; nil: a single node.
    public var redisURL: String?
    /// This node's name, unique among the nodes; nil: `<hostname>-<pid>`.
    public var node: String?
    /// Prefix of every Redis key and channel the nodes use (several clusters may share one Redis).
    public var prefix = "cairn"
    /// Seconds between refreshes of this node's presence in Redis; entries expire after three times this.
    public var presenceRefreshSeconds = 5
    /// Milliseconds a hide or an unfriend waits for every node where the owner is connected to acknowledge it; after
    /// that, it waits only for the nodes presence still lists.
    public var ackTimeoutMs = 2000
    /// The secret every node signs its Redis messages with; nil: the one kept in the shared store (`storage.url`).
    public var key: String?
    /// For tests only, and not an option of the table: each control message from another node is handled this many
    /// milliseconds after it arrives (0: at once). Set by `cairn serve`'s hidden `--cluster-apply-delay-ms`.
    public var applyDelayMs: Int64 = 0
    /// The fewest characters `key` may have.
    public static let minimumKeyLength = 32
    /// Why a node without a shared store cannot start without `key`.
    public static let missingKey =
        "cluster.redis_url without storage.url needs cluster.key: the same secret of 32 or more characters on "
        + "every node (e.g. openssl rand -hex 32), which signs what the nodes publish on Redis"

    /// The defaults: a single node.
    public init() {}

    /// True when the hub runs as one of several nodes.
    public var isEnabled: Bool { redisURL != nil }

    /// The node name to use: the configured one or `<hostname>-<pid>`.
    public var nodeName: String {
        if let node { return node }
        // gethostname, not ProcessInfo.hostName (which may ask DNS): this runs on the loop thread at start.
        var buffer = [CChar](repeating: 0, count: 256)
        let named = gethostname(&buffer, buffer.count - 1) == 0
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        let full = named ? String(decoding: bytes, as: UTF8.self) : "node"
        let host = full.split(separator: ".").first.map(String.init) ?? "node"
        let cleaned = String(host.map { Self.isNameCharacter($0) ? $0 : "-" }.prefix(48))
        return "\(cleaned.isEmpty ? "node" : cleaned)-\(getpid())"
    }

    /// Why `url` cannot be used as `cluster.redis_url`, or nil.
    public static func problem(redisURL url: String) -> String? {
        do {
            _ = try RedisEndpoint(url: url)
            return nil
        } catch {
            return "cluster.redis_url '\(url)': \(error.message)"
        }
    }

    /// Why `key` cannot be used as `cluster.key`, or nil (the key itself is never repeated).
    public static func problem(key: String) -> String? {
        guard key.utf8.count >= minimumKeyLength else {
            return "cluster.key must have at least \(minimumKeyLength) characters (e.g. openssl rand -hex 32)"
        }
        return nil
    }

    /// Why `name` cannot be used as `cluster.node` or `cluster.prefix` (`key` names which), or nil.
    public static func problem(name: String, key: String) -> String? {
        guard !name.isEmpty, name.count <= 64, name.allSatisfy(isNameCharacter) else {
            return "\(key) '\(name)' must be 1 to 64 letters, digits, '.', '_' or '-'"
        }
        return nil
    }

    /// Every problem of these settings, or nil.
    public var problem: String? {
        guard let redisURL else { return nil }
        return Self.problem(redisURL: redisURL) ?? node.flatMap { Self.problem(name: $0, key: "cluster.node") }
            ?? Self.problem(name: prefix, key: "cluster.prefix") ?? key.flatMap { Self.problem(key: $0) }
    }

    private static func isNameCharacter(_ c: Character) -> Bool {
        c.isASCII && (c.isLetter || c.isNumber || c == "." || c == "_" || c == "-")
    }
}
