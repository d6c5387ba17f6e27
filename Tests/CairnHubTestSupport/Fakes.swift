// In-memory stand-ins for the domain's ports, so the domain is tested without sockets, SQLite or sleeping:
// a store kept in a dictionary, a scheduler that collects jobs for the test to run on its own thread (the test
// thread plays the event loop), and a seeded random source. Shared by the domain's and the protocol layer's tests.
public import CairnAdmin
public import CairnCore
public import CairnCrypto
public import CairnLoop
public import CairnProfiles
public import CairnSessions
public import CairnSocial
import Foundation
public import Synchronization
import Testing

public final class MemoryAccountStore: AccountStore, SocialStore, RoleStore, ProfileStore, AdminStore {
    /// Creates an empty one.
    public init() {}

    public struct State {
        /// The empty state.
        public init() {}

        public var users: [Int64: (user: User, hash: String?)] = [:]
        public var tokens: [[UInt8]: Int64] = [:]
        /// When each token was created (ms).
        public var tokenCreatedAt: [[UInt8]: Int64] = [:]
        public var nextID: Int64 = 1
        public var friendships: Set<[Int64]> = []
        public var requests: Set<[Int64]> = []
        public var rules: [[Int64]: (ShareLevel, Int64?)] = [:]
        public var ruleVersions: [[Int64]: Int64] = [:]
        public var positions: [Int64: Fix] = [:]
        public var history: [StoredFix] = []
        public var flushes: [PositionBatch] = []
        /// The cutoff of every position history purge asked for.
        public var purgeCutoffs: [Int64] = []
        public var failWrites = false
        /// When set, position snapshots after the first `pass` wait at `gate` before they are written.
        public var flushGate: (pass: Int, gate: Gate)?
        public var failReads = false
        /// Owners whose share-rule writes fail (a failure aimed at one request, whatever runs concurrently).
        public var failRuleWritesOf: Set<Int64> = []
        /// Users holding the ops role.
        public var ops: Set<Int64> = []
        /// Users holding the admin role.
        public var admins: Set<Int64> = []
        /// Each user's email, as stored (lower-cased).
        public var emails: [Int64: String] = [:]
        /// Each user's suspension (including ones that have run out, until lifted).
        public var suspensions: [Int64: Suspension] = [:]
        /// The admin audit log, oldest first.
        public var audit: [AuditEntry] = []
        /// Each user's creation time (ms).
        public var createdAt: [Int64: Int64] = [:]
        /// Each user's last activity (ms), as `markSeen` recorded it; creation counts as activity.
        public var lastSeen: [Int64: Int64] = [:]
        /// The `sparing` set of every guest purge asked for.
        public var purgeSpared: [Set<Int64>] = []
        /// Each user's bio and photo.
        public var profiles: [Int64: (bio: String?, photo: String?)] = [:]
        /// (media id, owner) pairs uploaded, as "id/owner".
        public var media: Set<String> = []
        /// Admins' settings, key → value as text.
        public var settings: [String: String] = [:]
        /// (day, user) pairs recorded active.
        public var activity: Set<[Int64]> = []
    }
    public let state = Mutex(State())

    public func createUser(_ new: NewUser) async throws -> User {
        try state.withLock { s in
            if s.users.values.contains(where: { $0.user.username == new.username }) {
                throw AccountStoreError.usernameTaken
            }
            if let email = new.email, s.emails.values.contains(email) { throw AccountStoreError.emailTaken }
            let user = User(id: s.nextID, username: new.username, name: new.name, isGuest: new.isGuest)
            s.users[user.id] = (user, new.passwordHash)
            s.emails[user.id] = new.email
            s.createdAt[user.id] = new.createdAt
            s.lastSeen[user.id] = new.createdAt
            s.nextID += 1
            return user
        }
    }

    public func credentials(username: String) async throws -> StoredCredentials? {
        state.withLock { s in
            s.users.values.first { $0.user.username == username }.map {
                StoredCredentials(user: $0.user, passwordHash: $0.hash)
            }
        }
    }

    public func credentials(email: String) async throws -> StoredCredentials? {
        state.withLock { s in
            s.emails.first { $0.value == email }.flatMap { s.users[$0.key] }.map {
                StoredCredentials(user: $0.user, passwordHash: $0.hash)
            }
        }
    }

    public func suspension(userID: Int64, now: Int64) async throws -> Suspension? {
        try state.withLock { s in
            if s.failReads { throw InjectedFailure() }
            return s.suspensions[userID].flatMap { $0.holds(at: now) ? $0 : nil }
        }
    }

    public func adminUsers(_ query: AdminUserQuery, now: Int64) async throws -> [AdminUserRow] {
        try state.withLock { s in
            if s.failReads { throw InjectedFailure() }
            let rows = s.users.values.map(\.user).filter { user in
                (query.guests || !user.isGuest) && (query.after.map { user.username > $0 } ?? true)
                    && (query.prefix.map { p in
                        user.username.hasPrefix(p) || (s.emails[user.id]?.hasPrefix(p) ?? false)
                    } ?? true)
            }.sorted { $0.username < $1.username }.prefix(query.limit)
            return rows.map { Self.adminRow($0, s, now) }
        }
    }

    public func adminUser(id: Int64, now: Int64) async throws -> AdminUserRow? {
        state.withLock { s in s.users[id].map { Self.adminRow($0.user, s, now) } }
    }

    private static func adminRow(_ user: User, _ s: State, _ now: Int64) -> AdminUserRow {
        AdminUserRow(
            user: user, email: s.emails[user.id], createdAt: s.createdAt[user.id] ?? 0,
            lastSeenAt: s.lastSeen[user.id], isAdmin: s.admins.contains(user.id),
            suspension: s.suspensions[user.id].flatMap { $0.holds(at: now) ? $0 : nil },
            friends: s.friendships.filter { $0.contains(user.id) }.count, buckets: 0, relics: 0)
    }

    public func suspend(userID: Int64, _ suspension: Suspension, audit: AuditEntry) async throws {
        try write { s in
            s.suspensions[userID] = suspension
            s.audit.append(audit)
        }
    }

    public func unsuspend(userID: Int64, audit: AuditEntry) async throws -> Bool {
        var lifted = false
        try write { s in
            lifted = s.suspensions.removeValue(forKey: userID) != nil
            if lifted { s.audit.append(audit) }
        }
        return lifted
    }

    public func auditLog(before: Int64?, limit: Int) async throws -> [(id: Int64, entry: AuditEntry)] {
        state.withLock { s in
            s.audit.enumerated().map { (Int64($0.offset + 1), $0.element) }.reversed()
                .filter { $0.0 < (before ?? Int64.max) }.prefix(limit).map { (id: $0.0, entry: $0.1) }
        }
    }

    public func insertToken(hash: [UInt8], userID: Int64, createdAt: Int64) async throws {
        state.withLock {
            $0.tokens[hash] = userID
            $0.tokenCreatedAt[hash] = createdAt
        }
    }

    public func user(tokenHash: [UInt8], issuedAfter: Int64?) async throws -> User? {
        try state.withLock { s in
            if s.failReads { throw InjectedFailure() }
            if let issuedAfter, (s.tokenCreatedAt[tokenHash] ?? Int64.min) <= issuedAfter { return nil }
            return s.tokens[tokenHash].flatMap { s.users[$0]?.user }
        }
    }

    public func deleteToken(hash: [UInt8]) async throws -> Bool {
        state.withLock { $0.tokens.removeValue(forKey: hash) != nil }
    }

    public func deleteTokens(userID: Int64) async throws -> Int {
        state.withLock { s in
            let theirs = s.tokens.filter { $0.value == userID }.keys
            for hash in theirs { s.tokens[hash] = nil }
            return theirs.count
        }
    }

    /// Deletes the relics of purged guests (the harness points it at its content store); returns their ids.
    public let purgeRelics = Mutex<(@Sendable (Set<Int64>) -> [Int64])?>(nil)

    public func markSeen(userIDs: [Int64], at: Int64) async throws {
        try state.withLock { s in
            if s.failWrites { throw InjectedFailure() }
            for id in userIDs { s.lastSeen[id] = max(s.lastSeen[id] ?? 0, at) }
        }
    }

    public func purgeGuests(seenBefore cutoff: Int64, sparing: Set<Int64>) async throws -> GuestPurge {
        let gone = try state.withLock { s -> Set<Int64> in
            if s.failWrites { throw InjectedFailure() }
            s.purgeSpared.append(sparing)
            let gone = Set(
                s.users.values.map(\.user).filter {
                    $0.isGuest && (s.lastSeen[$0.id] ?? 0) < cutoff && !sparing.contains($0.id)
                }.map(\.id))
            for id in gone {
                s.users[id] = nil
                s.lastSeen[id] = nil
                s.positions[id] = nil
                s.ops.remove(id)
            }
            s.tokens = s.tokens.filter { !gone.contains($0.value) }
            s.friendships = s.friendships.filter { gone.isDisjoint(with: $0) }
            s.requests = s.requests.filter { gone.isDisjoint(with: $0) }
            s.rules = s.rules.filter { gone.isDisjoint(with: $0.key) }
            s.history.removeAll { gone.contains($0.userID) }
            return gone
        }
        let relics = purgeRelics.withLock { $0 }?(gone) ?? []
        return GuestPurge(users: gone.sorted(), relics: relics.sorted())
    }

    /// Records an upload of `media` by `owner` (a profile photo must be one).
    public func addMedia(_ media: String, owner: Int64) { _ = state.withLock { $0.media.insert("\(media)/\(owner)") } }

    public func profile(id: Int64) async throws -> Profile? {
        try state.withLock { s in
            if s.failReads { throw InjectedFailure() }
            return s.users[id].map { Profile(user: $0.user, bio: s.profiles[id]?.bio, photo: s.profiles[id]?.photo) }
        }
    }

    public func updateProfile(userID: Int64, _ change: ProfileChange) async throws -> Profile? {
        try state.withLock { s in
            if s.failWrites { throw InjectedFailure() }
            guard let entry = s.users[userID] else { return nil }
            if let photo = change.photo, let media = photo, !s.media.contains("\(media)/\(userID)") {
                throw ProfileStoreError.mediaNotFound
            }
            var user = entry.user
            if let name = change.name {
                user = User(id: user.id, username: user.username, name: name, isGuest: user.isGuest)
                s.users[userID] = (user, entry.hash)
            }
            var profile = s.profiles[userID] ?? (nil, nil)
            if let bio = change.bio { profile.bio = bio }
            if let photo = change.photo { profile.photo = photo }
            s.profiles[userID] = profile
            return Profile(user: user, bio: profile.bio, photo: profile.photo)
        }
    }

    public struct InjectedFailure: Error {
        /// Creates the error.
        public init() {}
    }

    private func write(_ body: (inout State) -> Void) throws {
        try state.withLock { s in
            if s.failWrites { throw InjectedFailure() }
            body(&s)
        }
    }

    public func hasRole(_ role: UserRole, userID: Int64) async throws -> Bool {
        try state.withLock { s in
            if s.failReads { throw InjectedFailure() }
            switch role {
            case .ops: return s.ops.contains(userID)
            case .admin: return s.admins.contains(userID)
            }
        }
    }

    public func loadSocial() throws -> SocialSnapshot {
        state.withLock { s in
            var snapshot = Self.sharing(s)
            snapshot.positions = s.positions.map { StoredFix(userID: $0.key, fix: $0.value) }
            return snapshot
        }
    }

    public func loadSharing() async throws -> SocialSnapshot {
        try state.withLock { s in
            if s.failReads { throw InjectedFailure() }
            return Self.sharing(s)
        }
    }

    private static func sharing(_ s: State) -> SocialSnapshot {
        var snapshot = SocialSnapshot()
        snapshot.friendships = s.friendships.map { ($0[0], $0[1]) }
        snapshot.requests = s.requests.map { (from: $0[0], to: $0[1]) }
        snapshot.shareRules = s.rules.map { key, value in
            StoredShareRule(
                ownerID: key[0], viewerID: key[1] == 0 ? nil : key[1], level: value.0, until: value.1,
                version: s.ruleVersions[key] ?? 0)
        }
        for (key, version) in s.ruleVersions where s.rules[key] == nil {
            snapshot.clearedRules.append(
                StoredShareRule(
                    ownerID: key[0], viewerID: key[1] == 0 ? nil : key[1], level: .precise, until: nil,
                    version: version))
        }
        snapshot.maxRuleVersion = s.ruleVersions.values.max() ?? 0
        return snapshot
    }

    public func user(id: Int64) async throws -> User? { state.withLock { $0.users[id]?.user } }

    public func users(ids: [Int64]) async throws -> [User] {
        state.withLock { s in ids.compactMap { s.users[$0]?.user }.sorted { $0.id < $1.id } }
    }

    public func searchUsers(prefix: String, excluding: Int64, limit: Int) async throws -> [User] {
        state.withLock { s in
            s.users.values.map(\.user)
                .filter {
                    !$0.isGuest && $0.id != excluding
                        && ($0.username.hasPrefix(prefix.lowercased())
                            || $0.name.lowercased().hasPrefix(prefix.lowercased()))
                }
                .sorted { $0.username < $1.username }
                .prefix(limit).map { $0 }
        }
    }

    public func addFriendRequest(from: Int64, to: Int64, at: Int64) async throws {
        try write { $0.requests.insert([from, to]) }
    }
    public func deleteFriendRequest(from: Int64, to: Int64) async throws {
        try write { $0.requests.remove([from, to]) }
    }

    public func addFriendship(_ a: Int64, _ b: Int64, at: Int64) async throws {
        try state.withLock { s in
            if s.failWrites { throw InjectedFailure() }
            // Checked under the same lock as the write, as the SQLite store checks in the same transaction.
            guard s.friendships.contains([min(a, b), max(a, b)]) || s.requests.contains([b, a]) else {
                throw SocialStoreError.noFriendRequest(from: b, to: a)
            }
            s.friendships.insert([min(a, b), max(a, b)])
            s.requests.remove([a, b])
            s.requests.remove([b, a])
        }
    }

    public func deleteFriendship(_ a: Int64, _ b: Int64, versionAB: Int64, versionBA: Int64) async throws {
        try write { s in
            s.friendships.remove([min(a, b), max(a, b)])
            for (key, version) in [([a, b], versionAB), ([b, a], versionBA)]
            where version > s.ruleVersions[key, default: 0] {
                s.ruleVersions[key] = version
                s.rules[key] = nil
            }
        }
    }

    public func saveShareRule(ownerID: Int64, viewerID: Int64?, level: ShareLevel?, until: Int64?, version: Int64)
        async throws
    {
        if state.withLock({ $0.failRuleWritesOf.contains(ownerID) }) { throw InjectedFailure() }
        try write { s in
            let key = [ownerID, viewerID ?? 0]
            guard version > s.ruleVersions[key, default: 0] else { return }
            s.ruleVersions[key] = version
            s.rules[key] = level.map { ($0, until) }
        }
    }

    public func flushPositions(_ batch: PositionBatch) async throws {
        let gate: Gate? = state.withLock { s in
            guard let held = s.flushGate else { return nil }
            guard held.pass == 0 else {
                s.flushGate = (held.pass - 1, held.gate)
                return nil
            }
            return held.gate
        }
        if let gate { await gate.wait() }
        try write { s in
            for item in batch.latest { s.positions[item.userID] = item.fix }
            s.history += batch.history
            s.flushes.append(batch)
        }
    }

    public func purgePositionHistory(before cutoff: Int64) async throws -> Int {
        try state.withLock { s in
            if s.failWrites { throw InjectedFailure() }
            let before = s.history.count
            s.history.removeAll { $0.fix.ts < cutoff }
            s.purgeCutoffs.append(cutoff)
            return before - s.history.count
        }
    }
}

/// xorshift64*: deterministic bytes for tests.
public final class SeededRandom: RandomSource {
    private let state: Mutex<UInt64>
    public init(seed: UInt64) { state = Mutex(seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed) }
    public func bytes(_ count: Int) -> [UInt8] {
        state.withLock { x in
            (0..<count).map { _ in
                x ^= x >> 12
                x ^= x << 25
                x ^= x >> 27
                return UInt8(truncatingIfNeeded: (x &* 0x2545_F491_4F6C_DD1D) >> 56)
            }
        }
    }
}

/// Collects jobs; the test runs them on its own thread, which plays the event loop.
public final class CollectingScheduler: LoopScheduler {
    /// Creates an empty one.
    public init() {}

    private let jobs = Mutex<[@Sendable () -> Void]>([])

    public func execute(_ job: @escaping @Sendable () -> Void) { jobs.withLock { $0.append(job) } }

    /// Jobs queued and not yet run.
    public var pending: Int { jobs.withLock { $0.count } }

    /// Waits (up to 10 s) until at least `count` jobs have arrived, then runs all queued jobs.
    /// They run on the main actor: the tests play the event loop there (and claim the loop's confinement).
    @MainActor
    public func run(atLeast count: Int = 1) async throws {
        var waited = 0
        while jobs.withLock({ $0.count }) < count {
            try await Task.sleep(nanoseconds: 1_000_000)
            waited += 1
            if waited > 10_000 {
                Issue.record("timed out waiting for \(count) job(s)")
                return
            }
        }
        let taken = jobs.withLock { j in
            defer { j.removeAll() }
            return j
        }
        for job in taken { job() }
    }

    /// Waits (up to 10 s) until at least `count` jobs have arrived and takes them without running them: the test holds
    /// them (a store read that comes back late) and runs them when it chooses.
    @MainActor
    public func hold(atLeast count: Int = 1) async throws -> [@Sendable () -> Void] {
        var waited = 0
        while jobs.withLock({ $0.count }) < count {
            try await Task.sleep(nanoseconds: 1_000_000)
            waited += 1
            if waited > 10_000 {
                Issue.record("timed out waiting for \(count) job(s)")
                return []
            }
        }
        return jobs.withLock { j in
            defer { j.removeAll() }
            return j
        }
    }
}

public func fastHasher(_ random: any RandomSource) -> PasswordHasher {
    PasswordHasher(parameters: ScryptParameters(n: 1024, r: 8, p: 1), workers: 1, random: random)
}
