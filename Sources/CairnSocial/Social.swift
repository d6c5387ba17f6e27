// Friends (seeds 000 and 001): search, requests, accepting, declining, removing, listing — and the sharing rules
// between friends (`Social+Privacy`). Social owns the friend graph and the rules; everyone else asks it who is
// whose friend and what a viewer may see. Every change is committed to the store before the reply and before the
// in-memory graph changes, except removal: a removed friend must stop receiving positions at once, so the graph
// changes first and is put back if the commit fails.
//
// What a change means for the live map leaves through two hooks the hub wires to it: `viewChanged` (a viewer's view
// of an owner changed or a friendship began: show the current position, or say it is hidden) and `viewEnded`
// (withdraw what is pending, say nothing).
public import CairnCore
import CairnErrorCodes
package import CairnSessions
import Logging

/// A friend as listed: the account and whether they are online now.
public struct FriendEntry: Sendable, Equatable {
    /// The account.
    public var user: User
    /// True while they have an authenticated connection and do not hide from the caller (pause or `hidden`).
    public var online: Bool
}

/// Where a friendship stands after a friend op.
public enum FriendStatus: String, Sendable {
    /// They are friends.
    case friends
    /// A request waits for an answer.
    case pending
    /// An unanswered request was withdrawn.
    case withdrawn
    /// The friendship ended.
    case removed
}

/// The answer to `friend.request`, `friend.accept` and `friend.remove`.
public struct FriendReply: Sendable {
    /// Where it stands.
    public var status: FriendStatus
    /// The new friend, when a request was accepted now.
    public var friend: FriendEntry?
}

/// The friend graph, the sharing rules, and the ops on them. Loop thread only.
public final class Social {
    let store: any SocialStore
    let work: LoopWork
    let clock: any Clock
    let sessions: Sessions
    let configuration: HubConfiguration
    package var events: (any HubEvents)?

    var graph = FriendGraph()
    var rules = ShareRules()
    var ruleVersions: [RuleKey: Int64] = [:]
    var committedRules: [RuleKey: CommittedRule] = [:]
    var lastRuleVersion: Int64 = 0
    /// The newest version of a friendship or request change between two users, here or from another node.
    var pairVersions: [PairKey: Int64] = [:]
    /// Resyncs with the shared store, running or asked for.
    var resyncs = ResyncQueue()
    /// Unfriends asked here whose commit is under way (a resync must not bring the friendship back meanwhile).
    var unfriendsInFlight: [PairKey: Int] = [:]
    /// Other nodes (nil: a single node): told of every committed friendship, request and rule change.
    public var remote: (any RemoteSocial)?
    /// New friend requests per user in the last hour.
    private let requestLimiter: LoginLimiter

    /// The view `viewer` has of `owner` may have changed (level, or a new friendship).
    package var viewChanged: ((_ owner: Int64, _ viewer: Int64) -> Void)?
    /// `viewer` may no longer see `owner` at all (no longer friends): withdraw what is pending.
    package var viewEnded: ((_ owner: Int64, _ viewer: Int64) -> Void)?
    /// A friendship's end was committed (buckets take back what was shared through it).
    package var friendshipEnded: ((_ a: Int64, _ b: Int64) -> Void)?
    /// A friendship's end committed through another node was applied here (that node's buckets took back the shares
    /// and told those it concerns; what hangs on it here follows).
    package var friendshipEndedElsewhere: ((_ a: Int64, _ b: Int64) -> Void)?

    package init(
        store: any SocialStore, work: LoopWork, clock: any Clock, sessions: Sessions,
        configuration: HubConfiguration
    ) {
        self.store = store
        self.work = work
        self.clock = clock
        self.sessions = sessions
        self.configuration = configuration
        self.requestLimiter = LoginLimiter(limit: max(1, configuration.friendRequestsPerHour), windowMs: 3_600_000)
    }

    /// Restores the friend graph and the sharing rules; call once, before serving.
    package func restore(_ snapshot: SocialSnapshot) {
        for (a, b) in snapshot.friendships { graph.addFriendship(a, b) }
        for r in snapshot.requests { graph.addRequest(from: r.from, to: r.to) }
        for r in snapshot.shareRules {
            if let viewer = r.viewerID {
                rules.set(owner: r.ownerID, viewer: viewer, level: r.level, until: r.until)
            } else if r.level == .hidden {
                rules.pause(r.ownerID, until: r.until)
            }
            let key = RuleKey(r.ownerID, r.viewerID)
            committedRules[key] = CommittedRule(
                entry: rules.entry(owner: r.ownerID, viewer: r.viewerID),
                version: r.version)
        }
        for r in snapshot.clearedRules {
            let key = RuleKey(r.ownerID, r.viewerID)
            if r.version > committedRules[key]?.version ?? .min {
                committedRules[key] = CommittedRule(entry: nil, version: r.version)
            }
        }
        // Versions continue above anything stored, whatever the clock says after a restart.
        lastRuleVersion = max(lastRuleVersion, snapshot.maxRuleVersion)
    }

    // MARK: Reading

    /// The friends of `user`.
    @inline(__always)
    public func friends(of user: Int64) -> Set<Int64> { graph.friends(of: user) }
    /// True when `a` and `b` are friends.
    public func areFriends(_ a: Int64, _ b: Int64) -> Bool { graph.areFriends(a, b) }
    /// What `viewer` may see of `owner` now.
    public func level(owner: Int64, viewer: Int64, now: Int64) -> ShareLevel {
        rules.level(owner: owner, viewer: viewer, now: now)
    }
    /// What each viewer may see of `owner` at `now`, read once for a fan-out over the owner's friends.
    public func shareView(of owner: Int64, now: Int64) -> OwnerView { rules.view(of: owner, now: now) }

    /// True when `viewer` may see that `owner` is online: they are, and they neither pause nor hide from `viewer`.
    /// Presence is a position's shadow (online now, probably moving), so whoever may not see the one sees neither.
    public func appearsOnline(_ owner: Int64, to viewer: Int64, now: Int64) -> Bool {
        sessions.isOnlineAnywhere(owner) && rules.level(owner: owner, viewer: viewer, now: now) != .hidden
    }

    /// `user` came online or went offline: tells each friend they do not hide from.
    package func presenceChanged(_ user: Int64, online: Bool) {
        let friends = graph.friends(of: user)
        guard !friends.isEmpty, let events else { return }
        let now = clock.now()
        let audience = friends.filter { rules.level(owner: user, viewer: $0, now: now) != .hidden }
        guard !audience.isEmpty else { return }
        events.publish(.presence(user: user, online: online), toUsers: Array(audience), excluding: nil)
    }

    /// `user` came online on another node (their first connection anywhere else) or went offline on every other
    /// node (the presence mirror's news). Friends connected here hear it, unless the user is connected here too (then
    /// nothing changed for them).
    package func applyRemotePresence(_ user: Int64, online: Bool) {
        guard !sessions.isOnline(user) else { return }
        presenceChanged(user, online: online)
    }

    /// `viewer`'s level for `owner` went from `before` to `after`: if that crossed "hidden" while `owner` is
    /// online, `viewer` hears them go offline (hidden) or come online (revealed).
    func presenceVisibilityChanged(owner: Int64, viewer: Int64, from before: ShareLevel, to after: ShareLevel) {
        guard (before == .hidden) != (after == .hidden), sessions.isOnlineAnywhere(owner) else { return }
        events?.publish(.presence(user: owner, online: after != .hidden), toUsers: [viewer], excluding: nil)
    }

    /// True when `owner` is paused (ghost mode) at `now`.
    public func isPaused(_ owner: Int64, now: Int64) -> Bool { rules.isPaused(owner, now: now) }
    /// True when some friend sees less than `owner`'s precise position at `now` (hidden or approximate).
    public func restricts(_ owner: Int64, now: Int64) -> Bool { rules.restricts(owner, now: now) }

    // MARK: Ops

    /// Finds users whose username or name starts with `query`.
    public func search(_ caller: Caller, query raw: String, _ done: @escaping Outcome<[User]>) {
        // Bytes first (O(1)): trimming and counting characters cost time in proportion to the text, on the loop.
        guard raw.utf8.count <= 1024 else {
            return done(.failure(.badRequest("field 'q' must be at most 64 characters")))
        }
        let query = raw.trimmingWhitespace()
        guard !query.isEmpty else { return done(.failure(.badRequest("field 'q' must not be empty"))) }
        guard query.count <= 64 else { return done(.failure(.badRequest("field 'q' must be at most 64 characters"))) }
        let store = self.store
        let limit = configuration.searchLimit
        let me = caller.user.id
        work.run(
            { () async throws(DomainError) -> [User] in
                try await LoopWork.storage { try await store.searchUsers(prefix: query, excluding: me, limit: limit) }
            }, then: done)
    }

    /// Asks `target` to be friends (asking back someone who asked first is accepting).
    public func request(_ caller: Caller, target: Int64, _ done: @escaping Outcome<FriendReply>) {
        let user = caller.user
        guard target != user.id else {
            return done(.failure(.badRequest("you cannot send a friend request to yourself")))
        }
        guard !user.isGuest else {
            return done(.failure(DomainError(.forbidden, "guests cannot have friends; register an account")))
        }
        if graph.areFriends(user.id, target) { return done(.success(FriendReply(status: .friends))) }
        if graph.hasRequest(from: target, to: user.id) {
            // They asked first: asking back is accepting.
            return accept(caller, target: target, done)
        }
        if graph.hasRequest(from: user.id, to: target) { return done(.success(FriendReply(status: .pending))) }
        let store = self.store
        let me = user.id
        let now = clock.now()
        // Only new requests count, whether or not they reach anyone: probing ids costs the same as asking.
        if let wait = requestLimiter.attempt(String(me), now: now) {
            return done(
                .failure(
                    DomainError(
                        .rateLimited,
                        "too many friend requests; try again in "
                            + "\((wait + 999) / 1000) s"
                    ).with(.init("retry_after_ms", wait))))
        }
        work.run(
            { () async throws(DomainError) -> User in
                guard let other = try await LoopWork.storage({ try await store.user(id: target) }) else {
                    throw DomainError(.notFound, "no user with id \(target)")
                }
                guard !other.isGuest else { throw DomainError(.forbidden, "guests cannot be befriended") }
                try await LoopWork.storage { try await store.addFriendRequest(from: me, to: target, at: now) }
                return other
            },
            then: { result in
                guard case .success(let other) = result else {
                    return done(result.map { _ in FriendReply(status: .pending) })
                }
                self.graph.addRequest(from: me, to: target)
                if self.graph.hasRequest(from: target, to: me) {
                    // They asked at the same moment (both requests were committing): asking back is accepting.
                    done(.success(FriendReply(status: .pending)))
                    self.befriendCrossedRequests(user, other, at: now)
                    return
                }
                self.announceRequest(from: me, to: target, pending: true)
                self.events?.publish(.friendRequest(from: user), toUsers: [target], excluding: nil)
                done(.success(FriendReply(status: .pending)))
            })
    }

    /// Two requests crossed: commit the friendship, then tell both sides as if one had accepted.
    private func befriendCrossedRequests(_ a: User, _ b: User, at now: Int64) {
        let store = self.store
        work.background(
            { try await store.addFriendship(a.id, b.id, at: now) },
            then: { result in
                guard case .success = result, !self.graph.areFriends(a.id, b.id) else { return }
                self.graph.addFriendship(a.id, b.id)
                self.announceFriendship(a.id, b.id, crossed: true)
                self.events?.publish(.friendAccepted(by: b), toUsers: [a.id], excluding: nil)
                self.events?.publish(.friendAccepted(by: a), toUsers: [b.id], excluding: nil)
                self.viewChanged?(a.id, b.id)
                self.viewChanged?(b.id, a.id)
            })
    }

    /// Accepts `target`'s request.
    public func accept(_ caller: Caller, target: Int64, _ done: @escaping Outcome<FriendReply>) {
        let user = caller.user
        if graph.areFriends(user.id, target) { return done(.success(FriendReply(status: .friends))) }
        guard graph.hasRequest(from: target, to: user.id) else {
            return done(.failure(DomainError(.notFound, "no friend request from user \(target)")))
        }
        let store = self.store
        let me = user.id
        let now = clock.now()
        work.run(
            { () async throws(DomainError) -> User? in
                do {
                    try await store.addFriendship(me, target, at: now)
                } catch SocialStoreError.noFriendRequest {
                    // Withdrawn (or declined elsewhere) after this accept checked the graph: the store said no.
                    throw DomainError(.notFound, "no friend request from user \(target)")
                } catch {
                    hubLogger.error("storage failure: \(error)")
                    throw DomainError.storage(error)
                }
                return try await LoopWork.storage { try await store.user(id: target) }
            },
            then: { result in
                guard case .success(let other) = result else {
                    if case .failure(let error) = result, error.code == .notFound {
                        self.graph.removeRequest(from: target, to: me)  // memory follows the store
                    }
                    return done(result.map { _ in FriendReply(status: .friends) })
                }
                self.graph.addFriendship(me, target)
                self.announceFriendship(me, target)
                self.events?.publish(.friendAccepted(by: user), toUsers: [target], excluding: nil)
                let shown = self.clock.now()
                let entry = other.map { FriendEntry(user: $0, online: self.appearsOnline($0.id, to: me, now: shown)) }
                done(.success(FriendReply(status: .friends, friend: entry)))
                // Watchers on either side see the new friend's position straight away.
                self.viewChanged?(target, me)
                self.viewChanged?(me, target)
            })
    }

    /// Declines `target`'s request.
    public func decline(_ caller: Caller, target: Int64, _ done: @escaping Outcome<Void>) {
        let me = caller.user.id
        guard graph.hasRequest(from: target, to: me) else {
            return done(.failure(DomainError(.notFound, "no friend request from user \(target)")))
        }
        let store = self.store
        work.run(
            { () async throws(DomainError) -> Bool in
                try await LoopWork.storage { try await store.deleteFriendRequest(from: target, to: me) }
                return true
            },
            then: { result in
                if case .success = result {
                    self.graph.removeRequest(from: target, to: me)
                    self.announceRequest(from: target, to: me, pending: false)
                }
                done(result.map { _ in () })
            })
    }

    /// Ends a friendship, or withdraws an unanswered request.
    public func remove(_ caller: Caller, target: Int64, _ done: @escaping Outcome<FriendReply>) {
        let user = caller.user
        let me = user.id
        let store = self.store
        if graph.hasRequest(from: me, to: target) && !graph.areFriends(me, target) {
            // Withdrawing a request that was never answered.
            work.run(
                { () async throws(DomainError) -> Bool in
                    try await LoopWork.storage { try await store.deleteFriendRequest(from: me, to: target) }
                    return true
                },
                then: { result in
                    if case .success = result {
                        self.graph.removeRequest(from: me, to: target)
                        self.announceRequest(from: me, to: target, pending: false)
                    }
                    done(result.map { _ in FriendReply(status: .withdrawn) })
                })
            return
        }
        guard graph.areFriends(me, target) else {
            return done(.failure(DomainError(.notFriends, "you are not friends with user \(target)")))
        }
        // Stop the flow of positions now, before the commit: privacy does not wait for the disk.
        graph.removeFriendship(me, target)
        unfriendsInFlight[PairKey(me, target), default: 0] += 1
        let versionMine = bumpRuleVersion(me, target)
        let versionTheirs = bumpRuleVersion(target, me)
        rules.forget(me, target)
        viewEnded?(target, me)
        viewEnded?(me, target)
        work.run(
            { () async throws(DomainError) -> Bool in
                try await LoopWork.storage {
                    try await store.deleteFriendship(me, target, versionAB: versionMine, versionBA: versionTheirs)
                }
                return true
            },
            then: { result in
                let pair = PairKey(me, target)
                let left = (self.unfriendsInFlight[pair] ?? 1) - 1
                self.unfriendsInFlight[pair] = left > 0 ? left : nil
                switch result {
                case .failure(let error):
                    // The store still has the friendship: put memory back in line with it (only what this request
                    // changed; versions never stored must not outrank changes committed elsewhere).
                    self.graph.addFriendship(me, target)
                    for (owner, viewer, version) in [(me, target, versionMine), (target, me, versionTheirs)]
                    where self.isLatest(version, owner, viewer) {
                        let key = RuleKey(owner, viewer)
                        self.rules.restore(owner: owner, viewer: viewer, to: self.committedRules[key]?.entry)
                        self.ruleVersions[key] = self.committedRules[key]?.version
                    }
                    done(.failure(error))
                case .success:
                    self.recordCommitted(RuleKey(me, target), nil, versionMine)
                    self.recordCommitted(RuleKey(target, me), nil, versionTheirs)
                    self.pairVersions[PairKey(me, target)] = max(versionMine, versionTheirs)
                    self.events?.publish(.friendRemoved(by: user), toUsers: [target], excluding: nil)
                    self.friendshipEnded?(me, target)
                    guard let remote = self.remote else { return done(.success(FriendReply(status: .removed))) }
                    // Answered once no node can still publish either to the other.
                    remote.friendshipEnded(me, target, versionAB: versionMine, versionBA: versionTheirs) {
                        done($0 ? .success(FriendReply(status: .removed)) : .failure(.unconfirmedElsewhere))
                    }
                }
            })
    }

    /// The caller's friends, each with whether they are online.
    public func list(_ caller: Caller, _ done: @escaping Outcome<[FriendEntry]>) {
        let me = caller.user.id
        let ids = Array(graph.friends(of: me))
        let store = self.store
        work.run(
            { () async throws(DomainError) -> [User] in
                try await LoopWork.storage { try await store.users(ids: ids) }
            },
            then: { result in
                let now = self.clock.now()
                done(
                    result.map { users in
                        users.filter { self.graph.areFriends(me, $0.id) }
                            .map { FriendEntry(user: $0, online: self.appearsOnline($0.id, to: me, now: now)) }
                    })
            })
    }

    /// The caller's pending requests, both ways.
    public func requests(_ caller: Caller, _ done: @escaping Outcome<(incoming: [User], outgoing: [User])>) {
        let me = caller.user.id
        let incoming = graph.incomingRequests(of: me)
        let outgoing = graph.outgoingRequests(of: me)
        let ids = Array(incoming.union(outgoing))
        let store = self.store
        work.run(
            { () async throws(DomainError) -> [User] in
                try await LoopWork.storage { try await store.users(ids: ids) }
            },
            then: { result in
                done(
                    result.map { users in
                        (users.filter { incoming.contains($0.id) }, users.filter { outgoing.contains($0.id) })
                    })
            })
    }

    /// A friendship committed here: the other nodes hear of it (with a version newer than any held here). `a`
    /// accepted `b`'s request, or (`crossed`) their requests crossed and both were told.
    private func announceFriendship(_ a: Int64, _ b: Int64, crossed: Bool = false) {
        guard let remote else { return }
        let version = nextVersion()
        pairVersions[PairKey(a, b)] = version
        remote.friendshipBegan(a, b, version: version, crossed: crossed)
    }

    /// A request committed here, or its removal: the other nodes hear of it.
    private func announceRequest(from: Int64, to: Int64, pending: Bool) {
        guard let remote else { return }
        let version = nextVersion()
        pairVersions[PairKey(from, to)] = version
        remote.requestChanged(from: from, to: to, pending: pending, version: version)
    }
}
