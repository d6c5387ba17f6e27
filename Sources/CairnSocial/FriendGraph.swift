// The friend graph in memory: who is friends with whom and which requests are pending. The hub consults it on
// every position (fan-out goes to friends only), so it must answer "friends of U" without touching SQLite. It is
// rebuilt from the store at start and changed only after the store has committed the same change.

/// Friendships and pending friend requests.
public struct FriendGraph: Sendable {
    private var friends: [Int64: Set<Int64>] = [:]
    private var incoming: [Int64: Set<Int64>] = [:]
    private var outgoing: [Int64: Set<Int64>] = [:]
    /// The pairs changed since recording began (nil: not recording): a resync skips them, as what it read from the
    /// store may be older than what changed meanwhile.
    var touched: Set<PairKey>?

    /// An empty graph.
    public init() {}

    /// The friends of `user`.
    public func friends(of user: Int64) -> Set<Int64> { friends[user] ?? [] }
    /// True when `a` and `b` are friends.
    public func areFriends(_ a: Int64, _ b: Int64) -> Bool { friends[a]?.contains(b) ?? false }
    /// Users who asked `user` to be friends.
    public func incomingRequests(of user: Int64) -> Set<Int64> { incoming[user] ?? [] }
    /// Users `user` asked to be friends.
    public func outgoingRequests(of user: Int64) -> Set<Int64> { outgoing[user] ?? [] }
    /// True when `from` has a pending request to `to`.
    public func hasRequest(from: Int64, to: Int64) -> Bool { outgoing[from]?.contains(to) ?? false }
    /// Every friendship, once each (smaller id first).
    var allFriendships: [PairKey] {
        friends.flatMap { user, others in others.filter { user < $0 }.map { PairKey(user, $0) } }
    }
    /// Every pending request as (from, to).
    var allRequests: [(from: Int64, to: Int64)] {
        outgoing.flatMap { from, targets in targets.map { (from: from, to: $0) } }
    }

    /// Records a pending request.
    public mutating func addRequest(from: Int64, to: Int64) {
        touched?.insert(PairKey(from, to))
        outgoing[from, default: []].insert(to)
        incoming[to, default: []].insert(from)
    }

    /// Drops a pending request.
    public mutating func removeRequest(from: Int64, to: Int64) {
        touched?.insert(PairKey(from, to))
        Self.remove(to, from: from, in: &outgoing)
        Self.remove(from, from: to, in: &incoming)
    }

    /// Makes `a` and `b` friends and drops requests between them.
    public mutating func addFriendship(_ a: Int64, _ b: Int64) {
        touched?.insert(PairKey(a, b))
        friends[a, default: []].insert(b)
        friends[b, default: []].insert(a)
        removeRequest(from: a, to: b)
        removeRequest(from: b, to: a)
    }

    /// Ends a friendship and drops requests between them.
    public mutating func removeFriendship(_ a: Int64, _ b: Int64) {
        touched?.insert(PairKey(a, b))
        Self.remove(b, from: a, in: &friends)
        Self.remove(a, from: b, in: &friends)
        removeRequest(from: a, to: b)
        removeRequest(from: b, to: a)
    }

    private static func remove(_ value: Int64, from key: Int64, in table: inout [Int64: Set<Int64>]) {
        guard var set = table[key] else { return }
        set.remove(value)
        table[key] = set.isEmpty ? nil : set
    }
}
