// Presence shared by the nodes through Redis, so "online" is true for a friend connected to another node.
//
// In Redis (keys under the prefix, `P`):
//   P:presence        sorted set, member "<user>/<node>", score = expiry (ms since the epoch). Each node re-adds its
//                     online users every refresh; expired members are removed by whichever node refreshes next, so
//                     a node that dies without a word drops out within the TTL.
//   P:nodes           hash, field = node name, value = the expiry of that node's last refresh: which nodes are
//                     alive (for operators and for a node that must tell a dead peer from a quiet one).
//   P:presence (channel)  "+<user>/<node>" or "-<user>/<node>" the moment a user comes online on a node or leaves it.
//
// Each node keeps, on its loop, a mirror of who is online on the other nodes: rebuilt from the sorted set at every
// refresh (which also repairs anything missed while Redis was away) and updated at once from the channel. Reads
// (`isOnlineElsewhere`) never wait on the network. While Redis is away the mirror is emptied: friends on other
// nodes then appear offline rather than online for ever (fail closed), and come back at the first refresh after
// the link returns. A full mirror costs memory and a read of every online user per node per refresh; that is fine
// for a few nodes and tens of thousands of users, and is what part 2 replaces with per-friend channels.
//
// Other nodes answer an arrival (the news, or a new member found by their refresh) with the owners' positions on
// the owners' channels, which this node subscribed to for the arriving viewer just before. So what makes a user
// appear here (the ZADD and the "+" news, and every refresh, which re-adds) waits until Redis confirmed every
// SUBSCRIBE sent before it (`RedisLink.afterSubscriptions`), in order, so the leave news never overtakes a held
// arrival. A user is counted as local only once announced. If the pub/sub connection is lost first, the arrival is
// not sent: the refresh after the reconnect (itself behind the reconnect's SUBSCRIBE) adds the user and the other
// nodes' refreshes report the arrival. A leave is sent regardless (it fails at once while Redis is away).
import CairnLoop

/// This node's presence in Redis and its view of the other nodes' presence.
public final class ClusterPresence {
    /// This node's name (unique among the nodes sharing the Redis).
    public let node: String
    private let link: RedisLink
    private let key: String
    private let nodesKey: String
    private let channel: String
    private let ttlMs: Int64
    private let refreshSeconds: Double
    private let now: () -> Int64
    private let loop: UnsafeMutableRawPointer
    private var timer: LoopTimer?
    private var stopped = false

    /// Users with a connection on this node.
    private var local: Set<Int64> = []
    /// Users online elsewhere, with the nodes they are on.
    private var elsewhere: [Int64: Set<String>] = [:]
    /// How many users online elsewhere each node holds (kept with `elsewhere`, so asking which nodes hold someone
    /// does not walk every user).
    private var usersOn: [String: Int] = [:]
    /// Channel news since the last refresh was sent: member → (sequence, online). A refresh's reply may have been
    /// read by Redis before such news; it must not undo it.
    private var news: [String: (sequence: UInt64, online: Bool)] = [:]
    private var sequence: UInt64 = 0

    /// A user's "online elsewhere" changed (true: now on some other node; false: on none). Called on the loop.
    public var remoteChanged: ((Int64, Bool) -> Void)?
    /// A user came online on another node where this node had not heard of them (even if they were online on a
    /// third): owners connected here send that node their positions. Called on the loop.
    public var arrived: ((Int64) -> Void)?
    /// Refreshes whose mirror was applied (for tests and logs).
    public private(set) var refreshes = 0
    /// True once a refresh was applied since the link last came up: until then the mirror says nothing (it is
    /// emptied when the link drops), and "not listed" must not be taken for "gone".
    public private(set) var isCurrent = false
    /// The other nodes alive at the last refresh (their entry in `P:nodes` had not expired), with that expiry.
    private var liveNodes: [String: Int64] = [:]

    /// Presence of `node` over `link`, under `prefix`; re-added every `refreshSeconds`, expiring after three times
    /// that. `now` is the wall clock in ms (expiry scores are compared across nodes: keep clocks in sync).
    public init(
        link: RedisLink, loop: UnsafeMutableRawPointer, node: String, prefix: String, refreshSeconds: Double = 5,
        now: @escaping () -> Int64
    ) {
        self.link = link
        self.loop = loop
        self.node = node
        key = "\(prefix):presence"
        nodesKey = "\(prefix):nodes"
        channel = "\(prefix):presence"
        self.refreshSeconds = refreshSeconds
        ttlMs = Int64(refreshSeconds * 3000)
        self.now = now
    }

    /// Subscribes to the channel, refreshes whenever the link comes up and every `refreshSeconds`.
    public func start() {
        link.subscribe(channel) { [unowned self] payload in self.heard(payload) }
        link.observeState { [unowned self] up in
            if up {
                self.scheduleRefresh()
            } else {
                self.forgetElsewhere()
            }
        }
        let timer = LoopTimer(loop: loop) { [unowned self] in self.scheduleRefresh() }
        timer.start(after: refreshSeconds, repeat: refreshSeconds)
        self.timer = timer
        if link.isUp { scheduleRefresh() }
    }

    /// Stops refreshing. With `leaving`, this node's users are taken out of Redis and announced offline now (a
    /// clean shutdown); without, they expire within the TTL (as when a node dies).
    public func stop(leaving: Bool = false) {
        timer?.stop()
        timer = nil
        if leaving {
            // Now, not behind the barrier (the loop will not turn again); arrivals still held were never announced.
            for user in local.sorted() { announce(user, online: false, confirmed: true) }
            // Gone on purpose: nobody need wait for this node any more (see `otherNodes`).
            link.command(["HDEL", nodesKey, node])
        }
        stopped = true
    }

    /// True when `user` is online on another node, as last heard.
    public func isOnlineElsewhere(_ user: Int64) -> Bool { elsewhere[user] != nil }

    /// The other nodes `user` is connected to, as the mirror knows them.
    public func nodes(of user: Int64) -> Set<String> { elsewhere[user] ?? [] }

    /// How long a node's expired entry is still read: a node that vanished without leaving (a crash, a cut) is
    /// still among the nodes a wait names for this long (it then lapses at the deadline, see ControlChannel).
    public static let keptAfterExpiryMs: Int64 = 600_000
    /// The mirror was rebuilt (a refresh's reply was applied): who is alive may have changed.
    public var rebuilt: (() -> Void)?
    /// A refresh is being sent (this node's entry in `P:nodes` was just written): the node's name is claimed again
    /// beside it (`NodeNameClaim`).
    public var refreshing: (() -> Void)?

    /// The other nodes alive as last read, or whose entry expired less than `graceMs` ago (a node refreshes its
    /// entry in `P:nodes` every refresh; one that stops refreshing drops out when its entry expires), and those the
    /// mirror lists a user on.
    public func otherNodes(graceMs: Int64 = 0) -> Set<String> {
        let now = now()
        var nodes = Set(liveNodes.filter { $0.value + graceMs > now }.keys)
        nodes.formUnion(usersOn.keys)
        return nodes
    }

    /// True when `node` may still be serving: the mirror is not current yet, its entry expired less than `graceMs`
    /// ago (or not at all), or the mirror lists a user on it.
    public func mayBeServing(_ node: String, graceMs: Int64 = 0) -> Bool {
        guard isCurrent else { return true }
        if let expiry = liveNodes[node], expiry + graceMs > now() { return true }
        return usersOn[node] != nil
    }

    /// `user` came online here (first connection) or went offline here (last connection closed). Announced once
    /// Redis confirmed the subscriptions this node asked before (the user's friends' channels), in order.
    public func localChanged(_ user: Int64, online: Bool) {
        link.afterSubscriptions { [weak self] confirmed in
            self?.announce(user, online: online, confirmed: confirmed)
        }
    }

    private func announce(_ user: Int64, online: Bool, confirmed: Bool) {
        guard !stopped else { return }
        let member = "\(user)/\(node)"
        if online {
            local.insert(user)
            guard confirmed else { return }  // the pub/sub connection went: the reconnect's refresh adds the user
            link.command(["ZADD", key, "\(now() + ttlMs)", member])
        } else {
            local.remove(user)
            link.command(["ZREM", key, member])
        }
        link.publish(channel, Array(((online ? "+" : "-") + member).utf8))
    }

    // MARK: Refresh

    /// A refresh once the subscriptions asked so far are confirmed (it re-adds users: other nodes may answer).
    private func scheduleRefresh() {
        link.afterSubscriptions { [weak self] confirmed in
            guard confirmed else { return }  // the link went: its return refreshes again
            self?.refresh()
        }
    }

    /// Re-adds this node's users, drops expired members, and rebuilds the mirror from what is left.
    func refresh() {
        guard link.isUp, !stopped else { return }
        let now = now()
        let expiry = "\(now + ttlMs)"
        var users = Array(local)
        while !users.isEmpty {
            let chunk = users.suffix(512)
            users.removeLast(chunk.count)
            link.command(["ZADD", key] + chunk.flatMap { [expiry, "\($0)/\(node)"] })
        }
        link.command(["HSET", nodesKey, node, expiry])
        refreshing?()
        link.command(["HGETALL", nodesKey]) { [weak self] reply in
            guard let self, case .success(.array(let fields)) = reply else { return }
            var live: [String: Int64] = [:]
            var index = 0
            while index + 1 < fields.count {
                // Kept a while past their expiry (`mayBeServing` decides how long that still counts); a field long
                // past it is a node that is not coming back under that name: removed.
                if let name = fields[index].text, name != self.node, let text = fields[index + 1].text,
                    let expiry = Int64(text)
                {
                    if expiry + Self.keptAfterExpiryMs > self.now() {
                        live[name] = expiry
                    } else {
                        self.link.command(["HDEL", self.nodesKey, name])
                    }
                }
                index += 2
            }
            self.liveNodes = live
        }
        link.command(["ZREMRANGEBYSCORE", key, "-inf", "\(now)"])
        let sentAt = sequence
        link.command(["ZRANGEBYSCORE", key, "\(now)", "+inf"]) { [weak self] reply in
            guard let self, case .success(.array(let members)) = reply else { return }
            self.rebuild(from: members.compactMap(\.text), sentAt: sentAt)
        }
    }

    private func rebuild(from members: [String], sentAt: UInt64) {
        var online: [String: Bool] = [:]
        for member in members { online[member] = true }
        for (member, heard) in news where heard.sequence > sentAt { online[member] = heard.online }
        news = news.filter { $0.value.sequence > sentAt }
        var next: [Int64: Set<String>] = [:]
        for (member, isOnline) in online where isOnline {
            guard let (user, from) = Self.parse(member) else { continue }
            if from == node {
                // Ours but no longer online here (it went while Redis was away): take it out now.
                if !local.contains(user) { link.command(["ZREM", key, member]) }
                continue
            }
            next[user, default: []].insert(from)
        }
        let before = elsewhere
        elsewhere = next
        usersOn = [:]
        for nodes in next.values { for on in nodes { usersOn[on, default: 0] += 1 } }
        refreshes += 1
        isCurrent = true
        for user in Set(before.keys).union(next.keys) where (before[user] != nil) != (next[user] != nil) {
            remoteChanged?(user, next[user] != nil)
        }
        for (user, nodes) in next where !nodes.isSubset(of: before[user] ?? []) { arrived?(user) }
        rebuilt?()
    }

    // MARK: The channel

    private func heard(_ payload: [UInt8]) {
        guard let sign = payload.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") else { return }
        let member = String(decoding: payload.dropFirst(), as: UTF8.self)
        guard let (user, from) = Self.parse(member), from != node else { return }
        let online = sign == UInt8(ascii: "+")
        sequence += 1
        news[member] = (sequence, online)
        let was = elsewhere[user] != nil
        var isNew = false
        if online {
            isNew = elsewhere[user, default: []].insert(from).inserted
            if isNew { usersOn[from, default: 0] += 1 }
        } else {
            if elsewhere[user]?.remove(from) != nil {
                let left = (usersOn[from] ?? 1) - 1
                usersOn[from] = left > 0 ? left : nil
            }
            if elsewhere[user]?.isEmpty == true { elsewhere[user] = nil }
        }
        let isNow = elsewhere[user] != nil
        if was != isNow { remoteChanged?(user, isNow) }
        if isNew { arrived?(user) }
    }

    private func forgetElsewhere() {
        isCurrent = false
        liveNodes.removeAll()
        let gone = Array(elsewhere.keys)
        elsewhere.removeAll()
        usersOn.removeAll()
        news.removeAll()
        for user in gone { remoteChanged?(user, false) }
    }

    /// "<user>/<node>" → (user, node).
    static func parse(_ member: String) -> (Int64, String)? {
        guard let slash = member.firstIndex(of: "/"), let user = Int64(member[..<slash]) else { return nil }
        let node = member[member.index(after: slash)...]
        return node.isEmpty ? nil : (user, String(node))
    }
}
