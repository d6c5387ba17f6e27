// Sessions: which connections are open, which account each is bound to, which must still authenticate and by
// when, which tokens were just revoked, and which connections watch the live map. Presence falls out of it: a
// user is online while at least one connection is bound to them. The account rules themselves (hashing, tokens,
// throttling) live in `Accounts`; this type binds their results to connections, on the loop.
//
// Each connection also carries its source address (as the transport saw it) and a budget of password checks:
// scrypt is the most expensive thing a request can ask for, so every hash or verification a connection starts
// (register, login, a relic's password) spends from a token bucket, and new accounts (`register`, `guest`) are
// limited per source address, so fresh guests cannot be minted to spread guesses over many accounts.
//
// Other features learn of session changes through three hooks the hub wires: `sessionEnding` (a connection is
// about to lose its account: stop watching, forget what it was shown), `presenceChanged` (a user came online or
// went offline) and `connectionGone`. Sessions never reads another feature's state.
public import CairnCore
import CairnErrorCodes
public import CairnLoop

/// Connections, their accounts, authentication deadlines, revocations and presence. Loop thread only.
public final class Sessions {
    private struct Connection {
        var user: User?
        var token: String?
        var watching = false
        /// Account operations (register, login, guest, auth) being checked for this connection.
        var authenticating = 0
        /// The source address, when the transport knows it.
        var peer: String?
        /// Password checks this connection may still start now (a token bucket, refilled over time).
        var checkTokens: Double
        var checksRefilledAt: Int64
    }

    private let accounts: Accounts
    private let work: LoopWork
    private let clock: any Clock
    private let authTimeoutMs: Int64
    private let configuration: HubConfiguration
    /// Accounts created per source address (register and guest).
    private let signups: LoginLimiter
    package var events: (any HubEvents)?

    private var connections = ConnectionMap<Connection>()
    private var authDeadlines: [ConnectionID: Int64] = [:]
    /// Recently revoked tokens, in revocation order (see `rememberRevoked`).
    private var revokedTokens = RecentSet<String>()
    /// Counts `logout {all: true}`s; an account check remembers the count it started at (see `bind`).
    private var revocationEpoch: UInt64 = 0
    /// The epoch of each account's latest logout everywhere or suspension, for recent ones, oldest first in
    /// `everywhereOrder`, with the close its late checks get.
    private var loggedOutEverywhere: [Int64: (epoch: UInt64, why: SessionEnd)] = [:]
    private var everywhereOrder: [Int64] = []
    /// Authenticated connections per user (presence: online while non-empty).
    private var byUser: [Int64: ConnectionList] = [:]
    /// Open connections per source address (loopback not counted).
    private var perAddress: [String: Int] = [:]
    /// Connections watching their friends, per user.
    private var watchers: [Int64: ConnectionList] = [:]
    /// Upgrade tokens being checked, and those waiting for room, oldest first from `waitingUpgradeHead`.
    private var upgradeChecks = 0
    private var waitingUpgradeChecks: [WaitingUpgradeCheck] = []
    private var waitingUpgradeHead = 0
    /// The most upgrade tokens checked at once. Clients reconnecting together (a restart, a network back) would
    /// otherwise each hold a task from their upgrade until the store answers: ten thousand tasks, freed one by one
    /// between the connections' long-lived allocations, left the heap full of holes (docs/BENCHMARKS.md, "Memory per
    /// connection"). The store's threads answer them in order either way.
    package static let maxUpgradeChecks = 64
    /// Upgrade tokens being checked now.
    package var upgradeChecksRunning: Int { upgradeChecks }
    /// Upgrade tokens waiting for room.
    package var upgradeChecksWaiting: Int { waitingUpgradeChecks.count - waitingUpgradeHead }
    private struct WaitingUpgradeCheck {
        var connection: ConnectionID
        var token: String
        var epoch: UInt64
        var checked: () -> Void
    }

    /// A connection is about to lose its account (closing, logging out, switching, revoked).
    package var sessionEnding: ((ConnectionID, Int64) -> Void)?
    /// A user came online (true) or went offline (false).
    package var presenceChanged: ((Int64, Bool) -> Void)?
    /// A connection closed (after its session, if any, ended).
    package var connectionGone: ((ConnectionID) -> Void)?
    /// A guest's session began or their last one ended: their last activity is worth recording (`GuestExpiry`).
    package var guestSeen: ((Int64) -> Void)?
    /// A connection was bound to an account (it authenticated): it counts as active today (`ActivityLog`).
    package var bound: ((User) -> Void)?

    package init(accounts: Accounts, work: LoopWork, clock: any Clock, configuration: HubConfiguration) {
        self.accounts = accounts
        self.work = work
        self.clock = clock
        self.authTimeoutMs = configuration.authTimeoutMs
        self.configuration = configuration
        self.signups = LoginLimiter(
            limit: max(1, configuration.signupsPerAddress),
            windowMs: max(1, configuration.signupWindowMs))
    }

    // MARK: Reading

    /// Open connections.
    public var connectionCount: Int { connections.count }
    /// Connections bound to an account (kept as they change, so a health probe costs nothing).
    public private(set) var authenticatedCount = 0
    /// Connections watching their friends (kept as they change).
    public private(set) var watchingCount = 0
    /// True while the connection is open.
    public func isOpen(_ connection: ConnectionID) -> Bool { connections[connection] != nil }
    /// The account bound to a connection.
    public func user(of connection: ConnectionID) -> User? {
        // Only the account is copied out, not the whole connection's state (every request asks this).
        connections.read(connection) { $0.user } ?? nil
    }
    /// The connections bound to `user`.
    public func connections(of user: Int64) -> [ConnectionID] { byUser[user].map(Array.init) ?? [] }
    /// True when `user` has an authenticated connection.
    public func isOnline(_ user: Int64) -> Bool { byUser[user] != nil }
    /// Presence on other nodes (nil on a single node); told of every local presence change by the hub's wiring.
    package var remotePresence: (any RemotePresence)?
    /// Other nodes (nil: a single node): told of logouts and suspensions committed here.
    package var remoteSessions: (any RemoteSessions)?
    /// Fingerprints of tokens other nodes revoked, remembered like `revokedTokens` (bounded, oldest first out).
    private var revokedFingerprints = RecentSet<TokenFingerprint>()
    /// Callers of the token re-check under way (see `recheckTokens`).
    private var recheckWaiting: [(Result<Int, DomainError>) -> Void] = []
    /// True when `user` is connected here or, as far as this node heard, on another node.
    public func isOnlineAnywhere(_ user: Int64) -> Bool {
        isOnline(user) || (remotePresence?.isOnlineElsewhere(user) ?? false)
    }
    /// The connections of `user` that watch the live map.
    public func watchingConnections(of user: Int64) -> [ConnectionID] { watchers[user].map(Array.init) ?? [] }
    /// The connections watching the live map, per user (no entry: none), read once for a fan-out over many users.
    package var watchingByUser: [Int64: ConnectionList] { watchers }
    /// True when some connection of `user` watches the live map.
    public func isWatching(_ user: Int64) -> Bool { watchers[user] != nil }
    /// True when this connection watches the live map.
    package func isWatching(connection: ConnectionID) -> Bool { connections[connection]?.watching ?? false }

    // MARK: Connections

    /// A connection opened from `peer` (its source address, when known); it must authenticate within the timeout.
    /// A token from the upgrade is checked now, and `checked` runs on the loop once it has been (the connection's
    /// requests should wait for it).
    public func open(
        _ connection: ConnectionID, token: String?, peer: String? = nil,
        checked: @escaping () -> Void = {}
    ) {
        connections[connection] = Connection(
            peer: peer, checkTokens: Double(configuration.passwordChecksBurst),
            checksRefilledAt: clock.now())
        authDeadlines[connection] = clock.now() + authTimeoutMs
        if let peer, configuration.connectionsPerAddress > 0, !Self.isLoopback(peer) {
            let count = (perAddress[peer] ?? 0) + 1
            perAddress[peer] = count
            if count > configuration.connectionsPerAddress {
                events?.end(connection, .tooManyConnections)
                checked()
                return
            }
        }
        if let token { authenticateOnUpgrade(connection, token: token, checked: checked) }
    }

    /// True for addresses on this machine (a reverse proxy, a load tester), which the per-address limit exempts.
    static func isLoopback(_ address: String) -> Bool {
        address.hasPrefix("127.") || address == "::1" || address.hasPrefix("::ffff:127.")
    }

    /// A connection closed: its session ends; work in flight for it finishes and is discarded.
    public func close(_ connection: ConnectionID) {
        guard let state = connections[connection] else { return }
        authDeadlines[connection] = nil
        if let peer = state.peer, let count = perAddress[peer] {
            perAddress[peer] = count > 1 ? count - 1 : nil
        }
        unbind(connection)
        connections[connection] = nil
        connectionGone?(connection)
    }

    /// Closes connections whose authentication deadline passed (unless an authentication is being checked).
    package func closeExpiredAuthentications(now: Int64) {
        guard !authDeadlines.isEmpty else { return }
        for (id, deadline) in authDeadlines where deadline <= now {
            guard let state = connections[id] else {
                authDeadlines[id] = nil
                continue
            }
            if state.authenticating > 0 { continue }  // an authentication is being checked: let it finish
            authDeadlines[id] = nil
            events?.end(id, .authenticationTimeout)
        }
    }

    // MARK: Watching

    /// Marks a connection as watching (or not); returns false when nothing changed.
    @discardableResult
    package func setWatching(_ connection: ConnectionID, _ watching: Bool) -> Bool {
        guard var state = connections[connection], let user = state.user, state.watching != watching else {
            return false
        }
        state.watching = watching
        connections[connection] = state
        watchingCount += watching ? 1 : -1
        if watching {
            watchers[user.id].add(connection)
        } else {
            watchers[user.id].remove(connection)
        }
        return true
    }

    // MARK: Budgets

    /// Spends one password check (an scrypt hash or verification) of `connection`'s budget. Nil when allowed;
    /// otherwise the refusal to answer with (nothing is spent then).
    public func spendPasswordCheck(_ connection: ConnectionID) -> DomainError? {
        let perMinute = configuration.passwordChecksPerMinute
        guard perMinute > 0, var state = connections[connection] else { return nil }
        let now = clock.now()
        let burst = Double(max(1, configuration.passwordChecksBurst))
        let elapsed = Double(max(0, now - state.checksRefilledAt))
        state.checkTokens = min(burst, state.checkTokens + elapsed * Double(perMinute) / 60_000)
        state.checksRefilledAt = now
        defer { connections[connection] = state }
        guard state.checkTokens >= 1 else {
            let wait = Int64(((1 - state.checkTokens) * 60_000 / Double(perMinute)).rounded(.up))
            return DomainError(
                .rateLimited,
                "too many password checks on this connection; try again in "
                    + "\((wait + 999) / 1000) s"
            ).with(.init("retry_after_ms", wait))
        }
        state.checkTokens -= 1
        return nil
    }

    /// Counts a new account from `connection`'s source address; nil when allowed, else the refusal. The returned
    /// key is handed back with `signupFailed` when no account was made after all.
    private func spendSignup(_ connection: ConnectionID, now: Int64) -> (key: String?, refusal: DomainError?) {
        guard configuration.signupsPerAddress > 0, let peer = connections[connection]?.peer else { return (nil, nil) }
        if let wait = signups.attempt(peer, now: now) {
            return (
                nil,
                DomainError(
                    .rateLimited,
                    "too many new accounts from your address; try again in "
                        + "\((wait + 999) / 1000) s"
                ).with(.init("retry_after_ms", wait))
            )
        }
        return (peer, nil)
    }

    // MARK: Account operations

    /// Creates an account (with an optional email) and binds the connection to it.
    public func register(
        _ connection: ConnectionID, username: String, password: String, name: String?, email: String? = nil,
        _ done: @escaping Outcome<Session>
    ) {
        if let refusal = spendPasswordCheck(connection) { return done(.failure(refusal)) }
        let accounts = self.accounts
        signUp(connection, done) { () async throws(DomainError) -> Session in
            try await accounts.register(username: username, password: password, name: name, email: email)
        }
    }

    /// Creates an account with `create` within the source address's signup budget and binds the connection to it;
    /// a creation that fails gives its place in the budget back (no account was made).
    private func signUp(
        _ connection: ConnectionID, _ done: @escaping Outcome<Session>,
        _ create: @escaping @Sendable () async throws(DomainError) -> Session
    ) {
        let at = clock.now()
        let signup = spendSignup(connection, now: at)
        if let refusal = signup.refusal { return done(.failure(refusal)) }
        let signups = self.signups
        authenticate(
            connection,
            { () async throws(DomainError) -> Session in
                do throws(DomainError) {
                    return try await create()
                } catch {
                    if let key = signup.key { signups.forgive(key, at: at) }
                    throw error
                }
            }, then: done)
    }

    /// Logs in and binds the connection.
    public func login(
        _ connection: ConnectionID, username: String, password: String, _ done: @escaping Outcome<Session>
    ) {
        if let refusal = spendPasswordCheck(connection) { return done(.failure(refusal)) }
        let accounts = self.accounts
        let source = connections[connection]?.peer
        authenticate(
            connection,
            { () async throws(DomainError) -> Session in
                try await accounts.login(username: username, password: password, connection: connection, source: source)
            }, then: done)
    }

    /// Creates a guest account and binds the connection.
    public func guest(_ connection: ConnectionID, _ done: @escaping Outcome<Session>) {
        let accounts = self.accounts
        signUp(connection, done) { () async throws(DomainError) -> Session in try await accounts.guest() }
    }

    /// Binds the connection to a token's account.
    public func auth(_ connection: ConnectionID, token: String, _ done: @escaping Outcome<User>) {
        let accounts = self.accounts
        let epoch = begin(connection)
        work.run(
            { () async throws(DomainError) -> User in try await accounts.authenticate(token: token) },
            then: { result in
                self.end(connection)
                if case .success(let user) = result, self.connections[connection] != nil {
                    self.bind(connection, to: user, token: token, checkedFrom: epoch)
                }
                done(result)
            })
    }

    /// Revokes the connection's token, ends every session that used it, and starts a new deadline here. With
    /// `everywhere`, revokes every token of the account and ends every other session of it. Without a token
    /// there is nothing to revoke.
    public func logout(_ connection: ConnectionID, everywhere: Bool = false, _ done: @escaping Outcome<Void>) {
        guard let token = connections[connection]?.token else {
            done(.success(()))
            return
        }
        let accounts = self.accounts
        if everywhere, let user = connections[connection]?.user {
            work.run(
                { () async throws(DomainError) -> Int in try await accounts.logoutEverywhere(userID: user.id) },
                then: { result in
                    switch result {
                    case .failure(let error): done(.failure(error))
                    case .success:
                        self.loggedOutEverywhere(connection, user: user.id, token: token)
                        self.remoteSessions?.sessionsEnded(user: user.id, why: .tokenRevoked)
                        done(.success(()))
                    }
                })
            return
        }
        let user = connections[connection]?.user?.id
        work.run(
            { () async throws(DomainError) -> Bool in
                try await accounts.logout(token: token)
                return true
            },
            then: { result in
                switch result {
                case .failure(let error): done(.failure(error))
                case .success:
                    self.loggedOut(connection, token: token)
                    if let user {
                        self.remoteSessions?.tokenRevoked(user: user, fingerprint: TokenFingerprint(token: token))
                    }
                    done(.success(()))
                }
            })
    }

    private func authenticate(
        _ connection: ConnectionID,
        _ work: @escaping @Sendable () async throws(DomainError) -> Session,
        then done: @escaping Outcome<Session>
    ) {
        let epoch = begin(connection)
        self.work.run(
            work,
            then: { result in
                self.end(connection)
                if case .success(let session) = result, self.connections[connection] != nil {
                    self.bind(connection, to: session.user, token: session.token, checkedFrom: epoch)
                }
                done(result)
            })
    }

    /// Counts an account check in progress; returns the revocation epoch it starts at.
    private func begin(_ connection: ConnectionID) -> UInt64 {
        connections[connection]?.authenticating += 1
        return revocationEpoch
    }
    private func end(_ connection: ConnectionID) { connections[connection]?.authenticating -= 1 }

    /// A token from an upgrade: checked now if fewer than `maxUpgradeChecks` are being checked, else queued behind
    /// them. It counts as being authenticated (no deadline close) and as slow work in flight from now on.
    private func authenticateOnUpgrade(_ connection: ConnectionID, token: String, checked: @escaping () -> Void) {
        let epoch = begin(connection)
        guard upgradeChecks < Self.maxUpgradeChecks else {
            work.hold()
            waitingUpgradeChecks.append(
                WaitingUpgradeCheck(connection: connection, token: token, epoch: epoch, checked: checked))
            return
        }
        checkUpgradeToken(connection, token: token, epoch: epoch, checked: checked)
    }

    /// Starts the oldest waiting upgrade checks while there is room; a connection that closed meanwhile is skipped.
    private func startWaitingUpgradeChecks() {
        while upgradeChecks < Self.maxUpgradeChecks, waitingUpgradeHead < waitingUpgradeChecks.count {
            let next = waitingUpgradeChecks[waitingUpgradeHead]
            waitingUpgradeChecks[waitingUpgradeHead].checked = {}  // let go of what it captured now
            waitingUpgradeHead += 1
            if connections[next.connection] == nil {
                next.checked()
            } else {
                checkUpgradeToken(next.connection, token: next.token, epoch: next.epoch, checked: next.checked)
            }
            work.release()  // after the check is counted itself: in flight never reads 0 in between
        }
        if waitingUpgradeHead == waitingUpgradeChecks.count {
            waitingUpgradeChecks.removeAll(keepingCapacity: waitingUpgradeChecks.capacity <= 1024)
            waitingUpgradeHead = 0
        } else if waitingUpgradeHead >= 1024 && waitingUpgradeHead * 2 >= waitingUpgradeChecks.count {
            waitingUpgradeChecks.removeFirst(waitingUpgradeHead)
            waitingUpgradeHead = 0
        }
    }

    private func checkUpgradeToken(
        _ connection: ConnectionID, token: String, epoch: UInt64, checked: @escaping () -> Void
    ) {
        let accounts = self.accounts
        upgradeChecks += 1
        work.run(
            { () async throws(DomainError) -> User in try await accounts.authenticate(token: token) },
            then: { result in
                self.upgradeChecks -= 1
                self.startWaitingUpgradeChecks()
                self.end(connection)
                defer { checked() }
                guard self.connections[connection] != nil else { return }
                switch result {
                case .success(let user): self.bind(connection, to: user, token: token, checkedFrom: epoch)
                case .failure(let error):
                    // Not the token's fault (e.g. storage trouble): a close the client may retry after.
                    let why: SessionEnd =
                        switch error.code {
                        case .unauthorized: .invalidToken
                        case .suspended: .suspended
                        default: .checkFailed
                        }
                    self.events?.end(connection, why)
                }
            })
    }

    private func loggedOut(_ connection: ConnectionID, token: String) {
        rememberRevoked(token)
        if connections[connection] != nil {
            unbind(connection)
            authDeadlines[connection] = clock.now() + authTimeoutMs
        }
        // Every other connection that used the revoked token loses its session too, even if this one has gone.
        for (other, state) in connections where other != connection && state.token == token {
            unbind(other)
            events?.end(other, .tokenRevoked)
        }
    }

    private func loggedOutEverywhere(_ connection: ConnectionID, user: Int64, token: String) {
        rememberRevoked(token)
        endEverywhere(user, .tokenRevoked)
        if connections[connection]?.user?.id == user {
            unbind(connection)
            authDeadlines[connection] = clock.now() + authTimeoutMs
        }
        for other in connections(of: user) where other != connection {
            unbind(other)
            events?.end(other, .tokenRevoked)
        }
    }

    /// Starts a new revocation epoch and remembers it for `user`: an account check that began before it cannot
    /// bind the account any more (it ends with `why`).
    private func endEverywhere(_ user: Int64, _ why: SessionEnd) {
        revocationEpoch += 1
        if loggedOutEverywhere.updateValue((revocationEpoch, why), forKey: user) == nil {
            everywhereOrder.append(user)
            if everywhereOrder.count > 4096 { loggedOutEverywhere[everywhereOrder.removeFirst()] = nil }
        }
    }

    /// The account was suspended (the suspension is committed): every connection bound to it is closed with
    /// `suspended`, and an account check that began before now cannot bind it; later checks meet the stored
    /// suspension.
    package func suspended(_ user: Int64) {
        endEverywhere(user, .suspended)
        for connection in connections(of: user) {
            unbind(connection)
            events?.end(connection, .suspended)
        }
        remoteSessions?.sessionsEnded(user: user, why: .suspended)
    }

    /// Another node committed the revocation of a token of `user`: the sessions here that use it end as a local
    /// logout's do, and a check of it that raced the revocation cannot bind it.
    package func applyRemoteTokenRevoked(user: Int64, fingerprint: TokenFingerprint) {
        revokedFingerprints.insert(fingerprint)
        for connection in connections(of: user) {
            guard let token = connections[connection]?.token, TokenFingerprint(token: token) == fingerprint else {
                continue
            }
            unbind(connection)
            events?.end(connection, .tokenRevoked)
        }
    }

    /// Checks every bound connection's token against the store again (a node that was cut off from the others may
    /// have missed their logouts and suspensions): a token the store no longer holds ends its connections as a
    /// revocation does, one whose account is suspended with `.suspended`. A token's age plays no part (a connection
    /// keeps the token it authenticated with). The check stops at the first store failure (nothing is ended for the
    /// tokens not checked); one asked while another runs joins it. `done` gets how many connections were ended.
    public func recheckTokens(_ done: @escaping (Result<Int, DomainError>) -> Void) {
        recheckWaiting.append(done)
        guard recheckWaiting.count == 1 else { return }
        let tokens = Array(Set(connections.values.compactMap { $0.user == nil ? nil : $0.token }))
        let accounts = self.accounts
        work.run(
            { () async throws(DomainError) -> [String: SessionEnd] in
                var refused: [String: SessionEnd] = [:]
                for token in tokens {
                    if let why = try await accounts.refusal(ofToken: token) { refused[token] = why }
                }
                return refused
            },
            then: { result in
                let outcome = result.map { refused in
                    var ended = 0
                    for (connection, state) in self.connections {
                        guard state.user != nil, let token = state.token, let why = refused[token] else { continue }
                        self.unbind(connection)
                        self.events?.end(connection, why)
                        ended += 1
                    }
                    return ended
                }
                let waiting = self.recheckWaiting
                self.recheckWaiting = []
                for done in waiting { done(outcome) }
            })
    }

    /// Another node committed the end of every session of `user` (a logout everywhere, a suspension): they end
    /// here too, with `why`, and an account check that began before cannot bind the account.
    package func applyRemoteSessionsEnded(user: Int64, why: SessionEnd) {
        endEverywhere(user, why)
        for connection in connections(of: user) {
            unbind(connection)
            events?.end(connection, why)
        }
    }

    /// The guests connected now.
    func onlineGuests() -> [Int64] {
        byUser.compactMap { user, list in
            list.first.flatMap { connections[$0]?.user }.flatMap { $0.isGuest ? user : nil }
        }
    }

    /// Ends every session of accounts that no longer exist (closed like a revoked token).
    package func endSessions(of users: [Int64]) {
        for user in users {
            for connection in connections(of: user) {
                unbind(connection)
                events?.end(connection, .tokenRevoked)
            }
        }
    }

    /// The account's stored details changed (a new display name): its connections carry the new value from now on.
    package func renamed(_ user: User) {
        for connection in connections(of: user.id) where connections[connection]?.user?.id == user.id {
            connections[connection]?.user = user
        }
    }

    /// Attaches a connection to a user (switching accounts if it had one); the first connection makes them online.
    /// `checkedFrom` is the revocation epoch at which the account check began: if the account logged out
    /// everywhere since, the check may have read a token just before it was deleted, so the session must not start.
    func bind(_ connection: ConnectionID, to user: User, token: String, checkedFrom epoch: UInt64? = nil) {
        guard let state = connections[connection] else { return }
        if let epoch, let revoked = loggedOutEverywhere[user.id], revoked.epoch > epoch {
            if state.token == token { unbind(connection) }
            events?.end(connection, revoked.why)
            return
        }
        if revokedTokens.contains(token)
            || (!revokedFingerprints.isEmpty && revokedFingerprints.contains(TokenFingerprint(token: token)))
        {
            // Checked just before a logout of the same token committed: the session must not start.
            if state.token == token { unbind(connection) }
            events?.end(connection, .tokenRevoked)
            return
        }
        if user.isGuest { guestSeen?(user.id) }
        bound?(user)
        if state.user?.id == user.id {
            connections[connection]?.token = token  // the same user again (e.g. a fresh login): no presence change
            return
        }
        if state.user != nil { unbind(connection) }
        connections[connection]?.user = user
        connections[connection]?.token = token
        authenticatedCount += 1
        authDeadlines[connection] = nil
        let wasOnline = isOnline(user.id)
        byUser[user.id].add(connection)
        if !wasOnline { presenceChanged?(user.id, true) }
    }

    /// Remembers a revoked token for a while, so a check that raced the revocation cannot bind it. Bounded: the
    /// oldest entries are forgotten first (by then any check that read the token before it was deleted is done).
    func rememberRevoked(_ token: String) {
        revokedTokens.insert(token)
    }

    /// Detaches a connection from its user; the last connection going makes them offline.
    private func unbind(_ connection: ConnectionID) {
        guard let user = connections[connection]?.user else { return }
        sessionEnding?(connection, user.id)
        setWatching(connection, false)
        connections[connection]?.user = nil
        connections[connection]?.token = nil
        authenticatedCount -= 1
        let wasOnline = byUser[user.id] != nil
        byUser[user.id].remove(connection)
        if wasOnline, byUser[user.id] == nil {
            if user.isGuest { guestSeen?(user.id) }
            presenceChanged?(user.id, false)
        }
    }
}
