// What the live friend map needs from durable storage: the friend graph, sharing rules and position snapshots.
// The graph and the rules are written one change at a time and committed before the reply (they must survive
// kill -9); positions are flushed in batches every few seconds (losing at most one interval is the contract).
// `loadSocial` runs once at start, before the event loop serves anyone, to rebuild the in-memory state.
public import CairnCore

/// A fix as stored and restored.
public struct StoredFix: Sendable, Equatable {
    /// The owner.
    public var userID: Int64
    /// The position.
    public var fix: Fix

    /// Creates the value.
    public init(userID: Int64, fix: Fix) {
        self.userID = userID
        self.fix = fix
    }
}

/// A sharing rule as stored: `viewerID == nil` is the owner's global pause.
public struct StoredShareRule: Sendable, Equatable {
    /// Whose position the rule governs.
    public var ownerID: Int64
    /// Which friend it applies to; nil for "everyone" (pause).
    public var viewerID: Int64?
    /// The level (for a pause, `.hidden`).
    public var level: ShareLevel
    /// When it reverts (ms since the epoch); nil for "until changed".
    public var until: Int64?
    /// The version of the change that stored it.
    public var version: Int64

    /// Creates the value.
    public init(ownerID: Int64, viewerID: Int64?, level: ShareLevel, until: Int64?, version: Int64 = 0) {
        self.ownerID = ownerID
        self.viewerID = viewerID
        self.level = level
        self.until = until
        self.version = version
    }
}

/// Everything the hub restores at start.
public struct SocialSnapshot: Sendable {
    /// Friend pairs.
    public var friendships: [(Int64, Int64)] = []
    /// Pending requests, from → to.
    public var requests: [(from: Int64, to: Int64)] = []
    /// Sharing rules.
    public var shareRules: [StoredShareRule] = []
    /// The highest rule version stored (tombstones included): new versions continue above it.
    public var maxRuleVersion: Int64 = 0
    /// Rules back at the default (precise for good, or no pause) with the version that put them there, so a node
    /// can tell a rule cleared after what it holds from one never set.
    public var clearedRules: [StoredShareRule] = []
    /// Last known positions.
    public var positions: [StoredFix] = []

    /// An empty snapshot.
    public init() {}
}

/// A batch of position changes handed from the loop to the store.
public struct PositionBatch: Sendable {
    /// Latest positions to upsert.
    public var latest: [StoredFix] = []
    /// Fixes that arrived late (older than the latest), kept as history.
    public var history: [StoredFix] = []

    /// An empty batch.
    public init() {}

    /// True when there is nothing to write.
    public var isEmpty: Bool { latest.isEmpty && history.isEmpty }
}

/// Why the store refused a friend-graph write.
public enum SocialStoreError: Error, Equatable, Sendable {
    /// The friend request being accepted is gone (withdrawn or declined while the accept was on its way).
    case noFriendRequest(from: Int64, to: Int64)
}

/// Durable storage for friends, sharing rules and positions.
public protocol SocialStore: Sendable {
    /// Loads everything the hub keeps in memory; called once at start.
    func loadSocial() throws -> SocialSnapshot
    /// The friendships, requests and sharing rules (no positions), read in one
    /// transaction while serving: with several nodes on one store, a node that may have missed other nodes' news
    /// brings its memory in line with this.
    func loadSharing() async throws -> SocialSnapshot
    /// A user by id.
    func user(id: Int64) async throws -> User?
    /// Users by ids (unknown ids are skipped).
    func users(ids: [Int64]) async throws -> [User]
    /// Non-guest users whose username or display name starts with `prefix` (case-insensitive), except `excluding`.
    func searchUsers(prefix: String, excluding: Int64, limit: Int) async throws -> [User]
    /// Records a friend request.
    func addFriendRequest(from: Int64, to: Int64, at: Int64) async throws
    /// Deletes a friend request.
    func deleteFriendRequest(from: Int64, to: Int64) async throws
    /// `a` accepts `b`'s request: makes them friends and deletes requests between them, in one transaction that
    /// first checks the request from `b` to `a` still exists (else `SocialStoreError.noFriendRequest`, nothing
    /// written). Already being friends is not an error.
    func addFriendship(_ a: Int64, _ b: Int64, at: Int64) async throws
    /// Ends a friendship and deletes requests between them, in one transaction. The sharing rules between them go
    /// back to the default as versioned placeholders (`versionAB` for a's rule about b, `versionBA` for b's about a),
    /// so an older rule write that finishes later cannot bring a rule back.
    func deleteFriendship(_ a: Int64, _ b: Int64, versionAB: Int64, versionBA: Int64) async throws
    /// Stores a sharing rule (nil level: back to the default), unless the store already holds a newer `version`
    /// for the same (owner, viewer): writes may complete out of order, the newest request must win.
    func saveShareRule(ownerID: Int64, viewerID: Int64?, level: ShareLevel?, until: Int64?, version: Int64) async throws
    /// Writes a batch of positions in one transaction.
    func flushPositions(_ batch: PositionBatch) async throws
    /// Deletes position history rows whose `ts` is before `cutoff`; returns how many.
    func purgePositionHistory(before cutoff: Int64) async throws -> Int
}
