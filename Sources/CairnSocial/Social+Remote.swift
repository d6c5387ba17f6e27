import CairnCore
// Changes committed through another node, applied to this node's memory through the paths a local change takes:
// the graph, the rules, presence shown or hidden to friends here, positions shown, hidden or withdrawn (and owners'
// channels followed or not) through `viewChanged` / `viewEnded`, buckets told of an ended friendship. Each change
// carries the version it was committed with; one not newer than what this node holds for its key (a rule's key,
// or the pair for a friendship or request) is ignored, so messages arriving late or twice, or this node's own
// messages coming back, undo nothing. A change that was applied here is also news for the users it concerns who are
// connected here (`Social+RemoteNews`): they hear `friend.request`, `friend.accepted` or `friend.removed` as they
// would from the node that committed it.

/// The key of a pair of users for friendship and request versions (order-independent for friendships).
struct PairKey: Hashable {
    let a: Int64
    let b: Int64
    init(_ a: Int64, _ b: Int64) {
        self.a = min(a, b)
        self.b = max(a, b)
    }
}

extension Social {
    /// Takes the next version for a change that is not a rule (a friendship, a request): above every version held.
    func nextVersion() -> Int64 {
        lastRuleVersion = max(lastRuleVersion + 1, clock.now() * 1000)
        return lastRuleVersion
    }

    /// True when `version` is newer than what this node holds for the pair (and records it if so).
    private func takePair(_ key: PairKey, _ version: Int64) -> Bool {
        guard version > pairVersions[key] ?? .min else { return false }
        pairVersions[key] = version
        lastRuleVersion = max(lastRuleVersion, version)
        return true
    }

    /// Another node committed the friendship of `a` and `b` at `version`: `a` accepted `b`'s request (`b` hears
    /// `friend.accepted` by `a`), or, `crossed`, their requests crossed (each hears it by the other, as on the node
    /// that committed it).
    ///
    /// A friendship begins after every rule between the two was written (an unfriend stamps both rules with its
    /// versions, and those are stored): a beginning not newer than a rule held here, from memory or from the store
    /// this node read at start or resync, is from before that rule — late, or replayed on the control channel — and
    /// is ignored, so an old genuine message cannot make ex-friends friends again.
    public func applyRemoteFriendshipBegan(_ a: Int64, _ b: Int64, version: Int64, crossed: Bool = false) {
        guard a != b, version > heldVersion(RuleKey(a, b)), version > heldVersion(RuleKey(b, a)) else { return }
        guard takePair(PairKey(a, b), version), beginFriendship(a, b) else { return }
        tellRemoteNews(.accepted, crossed ? [(by: a, to: b), (by: b, to: a)] : [(by: a, to: b)])
    }

    /// Another node committed the end of `a` and `b`'s friendship (`a` removed `b`, who hears `friend.removed`),
    /// resetting the rules both ways at these versions.
    public func applyRemoteFriendshipEnded(_ a: Int64, _ b: Int64, versionAB: Int64, versionBA: Int64) {
        guard a != b, takePair(PairKey(a, b), max(versionAB, versionBA)),
            endFriendship(a, b, versionAB: versionAB, versionBA: versionBA)
        else { return }
        tellRemoteNews(.removed, [(by: a, to: b)])
    }

    /// Makes `a` and `b` friends in memory as a committed friendship from elsewhere does; false when they already
    /// were.
    @discardableResult
    func beginFriendship(_ a: Int64, _ b: Int64) -> Bool {
        graph.removeRequest(from: a, to: b)
        graph.removeRequest(from: b, to: a)
        guard !graph.areFriends(a, b) else { return false }
        graph.addFriendship(a, b)
        viewChanged?(a, b)
        viewChanged?(b, a)
        return true
    }

    /// Ends `a` and `b`'s friendship in memory as a committed end from elsewhere does (the rules between them
    /// cleared at these versions, unless this node holds newer ones); false when they were not friends here.
    @discardableResult
    func endFriendship(_ a: Int64, _ b: Int64, versionAB: Int64, versionBA: Int64) -> Bool {
        graph.removeRequest(from: a, to: b)
        graph.removeRequest(from: b, to: a)
        for (owner, viewer, version) in [(a, b, versionAB), (b, a, versionBA)] {
            if version > heldVersion(RuleKey(owner, viewer)) { ruleVersions[RuleKey(owner, viewer)] = version }
            recordCommitted(RuleKey(owner, viewer), nil, version)  // newer than what was committed: kept
        }
        guard graph.areFriends(a, b) else { return false }
        graph.removeFriendship(a, b)
        rules.forget(a, b)
        viewEnded?(b, a)
        viewEnded?(a, b)
        friendshipEndedElsewhere?(a, b)  // the committing node removed the shares and told whoever lost a bucket
        return true
    }

    /// Another node committed a friend request from `from` to `to` (pending: `to` hears `friend.request`), or its
    /// removal.
    public func applyRemoteRequest(from: Int64, to: Int64, pending: Bool, version: Int64) {
        guard from != to, takePair(PairKey(from, to), version) else { return }
        if pending {
            guard !graph.areFriends(from, to), !graph.hasRequest(from: from, to: to) else { return }
            graph.addRequest(from: from, to: to)
            tellRemoteNews(.request, [(by: from, to: to)])
        } else {
            graph.removeRequest(from: from, to: to)
        }
    }

    /// Another node committed the rule of `owner` for `viewer` (nil: the pause) at `version`.
    public func applyRemoteRule(owner: Int64, viewer: Int64?, level: ShareLevel?, until: Int64?, version: Int64) {
        let key = RuleKey(owner, viewer)
        let entry = level.map { ShareRules.Rule(level: $0, until: until) }
        lastRuleVersion = max(lastRuleVersion, version)
        guard version > heldVersion(key) else {
            // A change asked here outranks it for now; if that one's write fails, memory goes back to the newest
            // committed rule, which may be this one.
            recordCommitted(key, entry, version)
            return
        }
        ruleVersions[key] = version
        changeRules(owner: owner, viewers: affectedViewers(owner, viewer)) {
            $0.restore(owner: owner, viewer: viewer, to: entry)
        }
        recordCommitted(key, entry, version)
    }

    /// The newest version this node knows for a rule key: asked here, or committed.
    func heldVersion(_ key: RuleKey) -> Int64 {
        max(ruleVersions[key] ?? .min, committedRules[key]?.version ?? .min)
    }
}
