// Two hubs started with one `cluster.node` would take each other's users out of presence at every refresh and
// answer each other's acknowledgements: the name must be unique, and nothing else in Redis would tell. So each
// process claims its name with an instance of its own (random, made at start) and the time it started, in the hash
// `<prefix>:instances` (field = node name, value = "<instance> <started ms>"), swapped atomically at every presence
// refresh: the swap returns the value it replaced. Our own value back means nobody else wrote the name since.
//
// Another instance's value at the first claim is what a predecessor left (a hub restarted after a crash, within the
// presence TTL): overwritten once, it is never written again. Another instance's value at a later claim proves a
// live writer: two running hubs share the name. Both see it within about one refresh of each other, and both apply
// the same rule to the same two values: the one that started later (ties: the greater instance) yields: it stops,
// as a hub that refuses to start; the other keeps serving and logs the conflict. No clock bound is guessed: a
// restart never claims twice as someone else. A clean stop deletes the field if it is still ours.

/// This process's claim on its node name in Redis, checked at every presence refresh.
public final class NodeNameClaim {
    /// Who holds a node name: a process's instance and the time it started (ms since the epoch).
    public struct Holder: Equatable, Sendable {
        /// Random per process.
        public let instance: String
        /// When the process started, on its clock.
        public let startedAtMs: Int64

        /// Creates a holder.
        public init(instance: String, startedAtMs: Int64) {
            self.instance = instance
            self.startedAtMs = startedAtMs
        }

        /// The value stored in Redis.
        var text: String { "\(instance) \(startedAtMs)" }

        /// Reads a stored value; nil when it is not one.
        static func parse(_ text: String) -> Holder? {
            let parts = text.split(separator: " ")
            guard parts.count == 2, !parts[0].isEmpty, let started = Int64(parts[1]) else { return nil }
            return Holder(instance: String(parts[0]), startedAtMs: started)
        }
    }

    /// Swaps the field and returns what it held, in one step (nothing may come between the read and the write).
    static let swapScript =
        "local old = redis.call('HGET', KEYS[1], ARGV[1]); redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]); return old"
    /// Deletes the field only while it holds this process's value.
    static let releaseScript =
        "if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end "
        + "return 0"

    /// The node name claimed.
    public let node: String
    /// This process.
    public let holder: Holder
    private let link: RedisLink
    private let key: String
    /// Claims whose reply came back.
    private var claims = 0
    /// Times another running process was found holding the name.
    public private(set) var conflicts: UInt64 = 0
    /// Another running process holds the name: `yields` is true when this process is the one that must stop (it
    /// started later). Called on the loop, at every claim that finds the other one.
    public var conflict: ((_ other: Holder, _ yields: Bool) -> Void)?

    /// The claim of `node` by `holder`, under `prefix`.
    public init(link: RedisLink, node: String, prefix: String, holder: Holder) {
        self.link = link
        self.node = node
        self.holder = holder
        key = "\(prefix):instances"
    }

    /// Writes this process's value and checks what it replaced; at every presence refresh.
    public func claim() {
        link.command(["EVAL", Self.swapScript, "1", key, node, holder.text]) { [weak self] reply in
            guard let self, case .success(let value) = reply else { return }
            self.claims += 1
            guard self.claims > 1, let text = value.text, let other = Holder.parse(text), other != self.holder
            else { return }
            self.conflicts += 1
            self.conflict?(other, Self.yields(self.holder, to: other))
        }
    }

    /// Deletes the field if it is still this process's (a clean stop).
    public func release() {
        link.command(["EVAL", Self.releaseScript, "1", key, node, holder.text])
    }

    /// True when `mine` must give the name up to `other`: it started later, or at the same moment with the greater
    /// instance. Both processes reach the same answer from the same two values.
    public static func yields(_ mine: Holder, to other: Holder) -> Bool {
        if mine.startedAtMs != other.startedAtMs { return mine.startedAtMs > other.startedAtMs }
        return mine.instance > other.instance
    }
}
