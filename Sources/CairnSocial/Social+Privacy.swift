// Privacy, enforced here on the server: pause (ghost mode, optionally timed), resume, and a level per friend
// (precise, approximate, hidden; optionally timed). Timed rules revert in `tick`, and expiry is also checked on
// every read.
//
// A change takes effect in memory the moment it is asked for — a hide withdraws pending positions before the store
// is even asked, a reveal shows only what the user just asked to show — and the store is then told. If the write
// fails, memory goes back to the last rule the store committed for that key (never to a guess), so what viewers see
// always matches either the user's latest request or what is durable.
//
// Several connections of one user may change the same rule at once, and their writes may finish in any order.
// Each change therefore takes a version for its (owner, viewer) key: a failure only undoes its change if no later
// request touched the key, and the store keeps the highest version, so the last request made wins in memory and on
// disk alike. Versions continue above the highest one stored, so a clock set back cannot make writes go unheard.
public import CairnCore
import CairnErrorCodes

/// What a user shares now (`share.list`).
public struct SharingState: Sendable, Equatable {
    /// One friend's level, other than the default.
    public struct Level: Sendable, Equatable {
        /// The friend.
        public var user: Int64
        /// What they see.
        public var level: ShareLevel
        /// When the level reverts to precise (ms), or nil for "until changed".
        public var until: Int64?
    }

    /// True while the user is paused (ghost mode).
    public var paused: Bool
    /// When the pause ends (ms), or nil for "until resumed" (or not paused).
    public var pausedUntil: Int64?
    /// The friends with a level other than precise, by id.
    public var levels: [Level]
}

/// A sharing rule's identity: viewer 0 stands for the owner's pause.
struct RuleKey: Hashable {
    let owner: Int64
    let viewer: Int64
    init(_ owner: Int64, _ viewer: Int64?) {
        self.owner = owner
        self.viewer = viewer ?? 0
    }
}

/// The rule the store last committed for a key, and the version it carries (nil entry: the default).
struct CommittedRule {
    var entry: ShareRules.Rule?
    var version: Int64
}

extension Social {
    /// Ghost mode refuses what would place `user` for everyone whatever their rules (a relic, a placed picture):
    /// `forbidden` naming `what` and how to do it (`toDo`) once sharing is resumed; nil when they are not paused.
    public func refusalWhilePaused(_ user: Int64, now: Int64, what: String, toDo: String) -> DomainError? {
        guard isPaused(user, now: now) else { return nil }
        return DomainError(
            .forbidden,
            "you are paused (share.pause): \(what) would show where you are; resume sharing (share.resume) "
                + toDo)
    }

    /// What the caller shares now: whether they are paused (and until when, nil for "until resumed"), and each
    /// friend's level other than the default `precise` with its end, by friend id. Read from memory, where every
    /// rule in force lives; an expired rule is not listed.
    public func sharing(_ caller: Caller) -> SharingState {
        let me = caller.user.id
        let now = clock.now()
        var state = SharingState(paused: rules.isPaused(me, now: now), pausedUntil: nil, levels: [])
        if state.paused { state.pausedUntil = rules.entry(owner: me, viewer: nil)?.until }
        for friend in graph.friends(of: me).sorted() {
            guard let rule = rules.rule(owner: me, viewer: friend, now: now), rule.level != .precise else { continue }
            state.levels.append(.init(user: friend, level: rule.level, until: rule.until))
        }
        return state
    }

    /// Hides the caller from everyone, for `seconds` or until resumed; answers the end time, if any.
    public func pause(_ caller: Caller, forSeconds seconds: Int64?, _ done: @escaping Outcome<Int64?>) {
        let until: Int64?
        do { until = try durationUntil(seconds, now: clock.now()) } catch { return done(.failure(error)) }
        let me = caller.user.id
        changeSharing(
            owner: me, viewer: nil, storedLevel: .hidden, until: until, change: { $0.pause(me, until: until) },
            then: { done($0.map { until }) })
    }

    /// Ends the caller's pause.
    public func resume(_ caller: Caller, _ done: @escaping Outcome<Void>) {
        let me = caller.user.id
        changeSharing(owner: me, viewer: nil, storedLevel: nil, until: nil, change: { $0.resume(me) }, then: done)
    }

    /// Sets what `viewer` may see of the caller, for `seconds` or for good; answers the end time, if any.
    public func setLevel(
        _ caller: Caller, viewer: Int64, level: ShareLevel, forSeconds seconds: Int64?,
        _ done: @escaping Outcome<Int64?>
    ) {
        let until: Int64?
        do { until = try durationUntil(seconds, now: clock.now()) } catch { return done(.failure(error)) }
        let me = caller.user.id
        guard graph.areFriends(me, viewer) else {
            return done(.failure(DomainError(.notFriends, "you are not friends with user \(viewer)")))
        }
        let storedLevel: ShareLevel? = (level == .precise && until == nil) ? nil : level
        changeSharing(
            owner: me, viewer: viewer, storedLevel: storedLevel, until: until,
            change: { $0.set(owner: me, viewer: viewer, level: level, until: until) },
            then: { done($0.map { until }) })
    }

    /// Applies one rule change now, stores it, and on failure returns the key to its last committed rule.
    private func changeSharing(
        owner: Int64, viewer: Int64?, storedLevel: ShareLevel?, until: Int64?,
        change: (inout ShareRules) -> Void, then done: @escaping Outcome<Void>
    ) {
        let key = RuleKey(owner, viewer)
        let version = bumpRuleVersion(owner, viewer)
        let lowered = changeRules(owner: owner, viewers: affectedViewers(owner, viewer), change)
        let applied = rules.entry(owner: owner, viewer: viewer)
        let store = self.store
        work.run(
            { () async throws(DomainError) -> Bool in
                try await LoopWork.storage {
                    try await store.saveShareRule(
                        ownerID: owner, viewerID: viewer, level: storedLevel, until: until,
                        version: version)
                }
                return true
            },
            then: { result in
                switch result {
                case .failure(let error):
                    if self.isLatest(version, owner, viewer) {
                        let committed = self.committedRules[key]?.entry
                        self.changeRules(owner: owner, viewers: self.affectedViewers(owner, viewer)) {
                            $0.restore(owner: owner, viewer: viewer, to: committed)
                        }
                        // The version was never stored: it must not outrank a change committed elsewhere.
                        self.ruleVersions[key] = self.committedRules[key]?.version
                    }
                    done(.failure(error))
                case .success:
                    self.recordCommitted(key, applied, version)
                    guard let remote = self.remote else { return done(.success(())) }
                    // A viewer sees less: answered once every node that could publish the owner applied it.
                    let confirmed: ((Bool) -> Void)? =
                        lowered ? { done($0 ? .success(()) : .failure(.unconfirmedElsewhere)) } : nil
                    remote.ruleChanged(
                        owner: owner, viewer: viewer, level: applied?.level, until: applied?.until, version: version,
                        confirmed: confirmed)
                    if !lowered { done(.success(())) }
                }
            })
    }

    func affectedViewers(_ owner: Int64, _ viewer: Int64?) -> Set<Int64> {
        viewer.map { [$0] } ?? graph.friends(of: owner)
    }

    func recordCommitted(_ key: RuleKey, _ entry: ShareRules.Rule?, _ version: Int64) {
        if version > committedRules[key]?.version ?? .min {
            committedRules[key] = CommittedRule(entry: entry, version: version)
        }
    }

    /// Applies a change to the rules and tells each of `viewers` whose view of `owner` changed. Viewers whose
    /// level stays the same hear nothing. True when some viewer now sees less than before.
    @discardableResult
    func changeRules(owner: Int64, viewers: Set<Int64>, _ change: (inout ShareRules) -> Void) -> Bool {
        var lowered = false
        let now = clock.now()
        var before: [Int64: ShareLevel] = [:]
        for viewer in viewers { before[viewer] = rules.level(owner: owner, viewer: viewer, now: now) }
        change(&rules)
        for viewer in viewers {
            let after = rules.level(owner: owner, viewer: viewer, now: now)
            let was = before[viewer] ?? .precise
            guard after != was else { continue }
            if after.detail < was.detail { lowered = true }
            viewChanged?(owner, viewer)
            presenceVisibilityChanged(owner: owner, viewer: viewer, from: was, to: after)
        }
        return lowered
    }

    /// Reverts rules whose time is up and tells the affected watchers. Nothing is written and no version is taken:
    /// the stored rule carries its end time (read-time expiry ignores it, and so does the next start), and every
    /// node expires it by itself. A version taken here could outrank a newer rule another node committed for the
    /// key after the end time, in this node's memory and in the store.
    package func expireShareRules(now: Int64) {
        // Read-time expiry already treats these rules as gone, so compare with what viewers last saw: the
        // rule's own level (a pause: hidden) against the level now in force.
        let ended = rules.expire(now: now)
        for rule in ended {
            for viewer in affectedViewers(rule.owner, rule.viewer) {
                let after = rules.level(owner: rule.owner, viewer: viewer, now: now)
                guard after != rule.level else { continue }
                viewChanged?(rule.owner, viewer)
                presenceVisibilityChanged(owner: rule.owner, viewer: viewer, from: rule.level, to: after)
            }
        }
    }

    /// Takes the next version for a rule key; versions only grow (from the clock, or above the stored maximum).
    func bumpRuleVersion(_ owner: Int64, _ viewer: Int64?) -> Int64 {
        lastRuleVersion = max(lastRuleVersion + 1, clock.now() * 1000)
        ruleVersions[RuleKey(owner, viewer)] = lastRuleVersion
        return lastRuleVersion
    }

    /// True when no request touched the rule key after the one that took `version`.
    func isLatest(_ version: Int64, _ owner: Int64, _ viewer: Int64?) -> Bool {
        ruleVersions[RuleKey(owner, viewer)] == version
    }

    /// Turns the optional `for` (seconds) into an absolute time.
    private func durationUntil(_ seconds: Int64?, now: Int64) throws(DomainError) -> Int64? {
        guard let seconds else { return nil }
        guard seconds >= 1 && seconds <= configuration.maxShareDurationSeconds else {
            throw .badRequest("field 'for' must be between 1 and \(configuration.maxShareDurationSeconds) seconds")
        }
        return now + seconds * 1000
    }
}
