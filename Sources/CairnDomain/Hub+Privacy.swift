// Privacy ops, enforced here on the server: `share.pause` (ghost mode, optionally timed), `share.resume`, and
// `share.set` per friend (precise, approximate, hidden; optionally timed). A change that hides more takes effect
// in memory at once — pending positions are withdrawn before the store is even asked — and is undone if the
// commit fails; a change that reveals more is applied after the commit. Timed rules revert in `tick`.
//
// Several connections of one user may change the same rule concurrently, and their store writes may finish in any
// order. Every change therefore takes a version for its (owner, viewer) key when it is requested: a completion
// only applies (or undoes) its change if no later request has touched the key, and the store keeps the highest
// version, so the last request made wins in memory and on disk alike. An undo restores only the entry it changed.
import CairnWire

/// A sharing rule's identity: viewer 0 stands for the owner's pause.
struct RuleKey: Hashable {
    let owner: Int64
    let viewer: Int64
    init(_ owner: Int64, _ viewer: Int64?) {
        self.owner = owner
        self.viewer = viewer ?? 0
    }
}

extension Hub {
    func pauseSharing(id: Int64?, from client: Client, user: User) throws(WireError) {
        let now = clock.now()
        let until = try durationUntil(now: now)
        let me = user.id, social = self.social
        let saved = rules.entry(owner: me, viewer: nil)
        let version = bumpRuleVersion(me, nil)
        changeRules(owner: me, viewers: graph.friends(of: me)) { $0.pause(me, until: until) }
        start(client, id: id, op: "share.pause", { () async throws(WireError) -> Bool in
            try await Self.storage {
                try await social.saveShareRule(ownerID: me, viewerID: nil, level: .hidden, until: until, version: version)
            }
            return true
        }, onFailure: { client, error in
            if self.isLatest(version, me, nil) {
                self.changeRules(owner: me, viewers: self.graph.friends(of: me)) { $0.restore(owner: me, viewer: nil, to: saved) }
            }
            self.fail(client, id: id, op: "share.pause", error)
        }, then: { client, _ in
            self.replyOK(client, id: id) { w in if let until { w.key("until"); w.int(until) } }
        })
    }

    func resumeSharing(id: Int64?, from client: Client, user: User) {
        let me = user.id, social = self.social
        let version = bumpRuleVersion(me, nil)
        start(client, id: id, op: "share.resume", { () async throws(WireError) -> Bool in
            try await Self.storage {
                try await social.saveShareRule(ownerID: me, viewerID: nil, level: nil, until: nil, version: version)
            }
            return true
        }, then: { client, _ in
            if self.isLatest(version, me, nil) {
                self.changeRules(owner: me, viewers: self.graph.friends(of: me)) { $0.resume(me) }
            }
            self.replyOK(client, id: id) { _ in }
        })
    }

    func setSharing(id: Int64?, from client: Client, user: User) throws(WireError) {
        let viewer = try friendID()
        let levelName = try message.requireString("level")
        guard let level = ShareLevel(rawValue: levelName) else {
            throw .badRequest("field 'level' must be \"precise\", \"approximate\" or \"hidden\"")
        }
        let now = clock.now()
        let until = try durationUntil(now: now)
        let me = user.id, social = self.social
        guard graph.areFriends(me, viewer) else { throw WireError(.notFriends, "you are not friends with user \(viewer)") }
        let storedLevel: ShareLevel? = (level == .precise && until == nil) ? nil : level
        let current = rules.level(owner: me, viewer: viewer, now: now)
        let reveals = level == .precise || (level == .approximate && current == .hidden)
        let saved = rules.entry(owner: me, viewer: viewer)
        let version = bumpRuleVersion(me, viewer)
        if !reveals {
            changeRules(owner: me, viewers: [viewer]) { $0.set(owner: me, viewer: viewer, level: level, until: until) }
        }
        start(client, id: id, op: "share.set", { () async throws(WireError) -> Bool in
            try await Self.storage {
                try await social.saveShareRule(ownerID: me, viewerID: viewer, level: storedLevel, until: until, version: version)
            }
            return true
        }, onFailure: { client, error in
            if !reveals && self.isLatest(version, me, viewer) {
                self.changeRules(owner: me, viewers: [viewer]) { $0.restore(owner: me, viewer: viewer, to: saved) }
            }
            self.fail(client, id: id, op: "share.set", error)
        }, then: { client, _ in
            if reveals && self.isLatest(version, me, viewer) {
                self.changeRules(owner: me, viewers: [viewer]) { $0.set(owner: me, viewer: viewer, level: level, until: until) }
            }
            self.replyOK(client, id: id) { w in
                w.key("level"); w.string(level.rawValue)
                if let until { w.key("until"); w.int(until) }
            }
        })
    }

    /// Applies a change to the rules and tells each of `viewers` whose view of `owner` changed: the position at
    /// the new level, or `pos.hidden`. Viewers whose level stays the same hear nothing.
    func changeRules(owner: Int64, viewers: Set<Int64>, _ change: (inout ShareRules) -> Void) {
        let now = clock.now()
        var before: [Int64: ShareLevel] = [:]
        for viewer in viewers { before[viewer] = rules.level(owner: owner, viewer: viewer, now: now) }
        change(&rules)
        for viewer in viewers where rules.level(owner: owner, viewer: viewer, now: now) != before[viewer] {
            sendCurrentPosition(of: owner, toWatchersOf: viewer)
        }
    }

    /// Reverts rules whose time is up, tells the affected watchers, and records the revert in the store.
    func expireShareRules(now: Int64) {
        // Read-time expiry already treats these rules as gone, so compare with what viewers last saw: the
        // rule's own level (a pause: hidden) against the level now in force.
        let ended = rules.expire(now: now)
        guard !ended.isEmpty else { return }
        let social = self.social
        var writes: [(owner: Int64, viewer: Int64?, version: Int64)] = []
        for rule in ended {
            let viewers = rule.viewer.map { Set([$0]) } ?? graph.friends(of: rule.owner)
            for viewer in viewers where rules.level(owner: rule.owner, viewer: viewer, now: now) != rule.level {
                sendCurrentPosition(of: rule.owner, toWatchersOf: viewer)
            }
            writes.append((rule.owner, rule.viewer, bumpRuleVersion(rule.owner, rule.viewer)))
        }
        let sealed = writes
        background({
            for w in sealed {
                try await social.saveShareRule(ownerID: w.owner, viewerID: w.viewer, level: nil, until: nil, version: w.version)
            }
        }, then: { result in
            // Harmless if it failed: expired rules are ignored when read and expire again after a restart.
            if case .failure(let error) = result { self.logger.warning("could not record expired share rules: \(error)") }
        })
    }

    /// Takes the next version for a rule key; versions grow across restarts too (they start from the clock).
    func bumpRuleVersion(_ owner: Int64, _ viewer: Int64?) -> Int64 {
        lastRuleVersion = max(lastRuleVersion + 1, clock.now() * 1000)
        ruleVersions[RuleKey(owner, viewer)] = lastRuleVersion
        return lastRuleVersion
    }

    /// True when no request touched the rule key after the one that took `version`.
    func isLatest(_ version: Int64, _ owner: Int64, _ viewer: Int64?) -> Bool {
        ruleVersions[RuleKey(owner, viewer)] == version
    }

    /// Reads the optional `for` (seconds) and turns it into an absolute time.
    private func durationUntil(now: Int64) throws(WireError) -> Int64? {
        guard let seconds = try message.int("for") else { return nil }
        guard seconds >= 1 && seconds <= configuration.maxShareDurationSeconds else {
            throw .badRequest("field 'for' must be between 1 and \(configuration.maxShareDurationSeconds) seconds")
        }
        return now + seconds * 1000
    }
}
