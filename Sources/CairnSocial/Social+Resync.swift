// Bringing this node's memory of friendships, requests and sharing rules in line with the shared store. With
// several nodes, other nodes' changes reach memory as control messages, and pub/sub does not replay: a node cut off
// from Redis misses what was published meanwhile, and a node that just started loaded the store before its
// subscription was confirmed. So the composition asks for a resync after every confirmed subscription to the control
// channel, and again and again while the link is down; each reads the store (`loadSharing`, one transaction) and
// applies the differences through the paths a change from another node takes (positions withdrawn, hidden or shown,
// channels followed or left).
//
// Nothing older than memory is applied. A rule only when its stored version is newer than the one this node holds
// (every change carries its version). A friendship or request only when nothing changed that pair while the read was
// under way, and a friendship is not brought back while an unfriend asked here is still committing. With the
// subscription confirmed before the read, every change committed after the read's snapshot arrives as a message;
// what the store held is the newest the node can know for the pairs nobody touched. A resync tells nobody anything
// (no `friend.request`, `friend.accepted` or `friend.removed`, unlike a change applied from a control message): it
// makes up state this node missed, it is not news, and whoever it concerns sees it in their next list. Loop thread
// only.
public import CairnCore

/// What one resync changed in memory.
public struct ResyncCounts: Sendable, Equatable {
    /// Friendships the store has and memory had not.
    public var friendshipsBegun = 0
    /// Friendships memory had and the store no longer has.
    public var friendshipsEnded = 0
    /// Requests added or dropped.
    public var requests = 0
    /// Sharing rules set or cleared.
    public var rules = 0

    /// Nothing changed.
    public init() {}

    /// The number of changes applied.
    public var total: Int { friendshipsBegun + friendshipsEnded + requests + rules }
}

/// Resyncs asked for while one is reading: one more runs after it, and answers them all.
struct ResyncQueue {
    var running = false
    var waiting: [(Result<ResyncCounts, DomainError>) -> Void] = []
    var current: [(Result<ResyncCounts, DomainError>) -> Void] = []
}

extension Social {
    /// Reads the shared store and applies what memory lacks; `done` learns what changed, or why the read failed
    /// (memory is then left as it was). A resync asked for while one reads runs after it, with a read of its own.
    public func resync(_ done: @escaping (Result<ResyncCounts, DomainError>) -> Void) {
        resyncs.waiting.append(done)
        guard !resyncs.running else { return }
        startResync()
    }

    private func startResync() {
        resyncs.running = true
        resyncs.current = resyncs.waiting
        resyncs.waiting = []
        graph.touched = []
        let store = self.store
        work.run(
            { () async throws(DomainError) -> SocialSnapshot in
                try await LoopWork.storage { try await store.loadSharing() }
            },
            then: { result in
                let touched = self.graph.touched ?? []
                self.graph.touched = nil
                let outcome = result.map { self.reconcile(with: $0, skipping: touched) }
                let answered = self.resyncs.current
                self.resyncs.current = []
                self.resyncs.running = false
                for done in answered { done(outcome) }
                if !self.resyncs.waiting.isEmpty { self.startResync() }
            })
    }

    /// Applies the differences between memory and `stored`, leaving the pairs in `touched` alone.
    func reconcile(with snapshot: SocialSnapshot, skipping touched: Set<PairKey>) -> ResyncCounts {
        var counts = ResyncCounts()
        var storedVersions: [RuleKey: Int64] = [:]
        for rule in snapshot.shareRules + snapshot.clearedRules {
            storedVersions[RuleKey(rule.ownerID, rule.viewerID)] = rule.version
        }
        func storedVersion(_ owner: Int64, _ viewer: Int64) -> Int64 { storedVersions[RuleKey(owner, viewer)] ?? 0 }
        let friendships = Set(snapshot.friendships.map { PairKey($0.0, $0.1) })

        // Ended first: nothing is shown to someone who is no longer a friend while the rest is applied.
        for pair in graph.allFriendships where !friendships.contains(pair) && !touched.contains(pair) {
            let (ab, ba) = (storedVersion(pair.a, pair.b), storedVersion(pair.b, pair.a))
            endFriendship(pair.a, pair.b, versionAB: ab, versionBA: ba)
            pairVersions[pair] = max(pairVersions[pair] ?? .min, ab, ba)
            counts.friendshipsEnded += 1
        }
        // Rules, each only when newer than what is held: a new friendship below is then shown at its level.
        for rule in snapshot.shareRules + snapshot.clearedRules {
            let key = RuleKey(rule.ownerID, rule.viewerID)
            guard rule.version > heldVersion(key) else { continue }
            let cleared = rule.level == .precise && rule.until == nil
            applyRemoteRule(
                owner: rule.ownerID, viewer: rule.viewerID, level: cleared ? nil : rule.level, until: rule.until,
                version: rule.version)
            counts.rules += 1
        }
        for pair in friendships where !graph.areFriends(pair.a, pair.b) && !touched.contains(pair) {
            // An unfriend asked here and still committing: the store's friendship is about to go.
            guard unfriendsInFlight[pair] == nil else { continue }
            beginFriendship(pair.a, pair.b)
            counts.friendshipsBegun += 1
        }
        // Requests: the store's set for every pair nobody touched (friends have none).
        let requests = Set(snapshot.requests.map { [$0.from, $0.to] })
        for request in graph.allRequests
        where !requests.contains([request.from, request.to]) && !touched.contains(PairKey(request.from, request.to)) {
            graph.removeRequest(from: request.from, to: request.to)
            counts.requests += 1
        }
        for request in snapshot.requests
        where !graph.hasRequest(from: request.from, to: request.to) && !graph.areFriends(request.from, request.to)
            && !touched.contains(PairKey(request.from, request.to))
        {
            graph.addRequest(from: request.from, to: request.to)
            counts.requests += 1
        }
        lastRuleVersion = max(lastRuleVersion, snapshot.maxRuleVersion)
        return counts
    }
}
