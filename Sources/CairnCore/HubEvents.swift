// The event seam: everything the domain has to tell someone who did not ask leaves through `HubEvents`. Events
// are addressed to users wherever the meaning is "this user should hear it" (a friend request, a chat message,
// a presence change), and to connections only where the fact is about a connection (what a map was shown, who
// watches the stats channel, a session that must close). The local implementation, in the protocol layer, encodes
// each event once and writes it to this process's connections; a cross-node implementation can publish the
// user-addressed ones to the nodes where those users are connected through the same port.
//
// Positions are the hot path and get calls of their own: the domain decides, per viewer, what that viewer may see
// (the precise fix, a fix snapped to the approximate grid, or nothing) before anything is encoded, and hands both
// versions at once, so each is encoded at most once per move however many viewers share it.
public import CairnLoop

/// One move being fanned out: whose it is, the versions its viewers may see, and the encodings the delivery has
/// made of them so far. The fan-out keeps it for the length of one move and hands it to each viewer's delivery,
/// so each version is encoded at most once however many viewers share it (the encodings are opaque bytes to
/// the domain).
public struct PositionFanOut {
    /// Whose position.
    public let owner: Int64
    /// The precise fix.
    public let precise: Fix
    /// The fix reduced for approximate viewers, once one needs it.
    public package(set) var approximate: Fix?
    /// The delivery's encoding of `precise`, once made.
    public var encodedPrecise: [UInt8]?
    /// The delivery's encoding of `approximate`, once made.
    public var encodedApproximate: [UInt8]?

    package init(owner: Int64, precise: Fix) {
        self.owner = owner
        self.precise = precise
    }
}

/// A position as one viewer may see it: the precise fix, or one reduced to an approximate cell and its time.
public struct VisiblePosition: Sendable, Equatable {
    /// Whose position.
    public var owner: Int64
    /// The fix as the viewer may see it (for approximate viewers only `lat`, `lon` and `ts`, to the minute).
    public var fix: Fix
    /// True when `fix` is the approximate version.
    public var approximate: Bool
    /// True when the position is older than the hub's staleness limit (shown, not live).
    public var stale: Bool

    /// Creates the value.
    public init(owner: Int64, fix: Fix, approximate: Bool, stale: Bool = false) {
        self.owner = owner
        self.fix = fix
        self.approximate = approximate
        self.stale = stale
    }
}

/// Something the domain tells users or connections that did not ask.
public enum HubEvent: Sendable {
    /// A friend came online or went offline.
    case presence(user: Int64, online: Bool)
    /// Someone asked to be friends.
    case friendRequest(from: User)
    /// A request was accepted (by `by`).
    case friendAccepted(by: User)
    /// A friendship was ended (by `by`).
    case friendRemoved(by: User)
    /// A chat message.
    case chatMessage(ChatMessage)
    /// The reader marked a conversation read (for the reader's other connections).
    case chatRead(with: Int64, upto: Int64, unread: Int)
    /// The user stepped inside a relic's circle, or a relic appeared around them.
    case relicAppeared(RelicMarker)
    /// A relic left the user's reach or was deleted (`reason` says why when it was deleted).
    case relicVanished(id: Int64, reason: String?)
    /// A relic's time ran out.
    case relicExpired(id: Int64)
    /// A bucket the user can view changed (its name, privacy, members or items).
    case bucketChanged(bucket: Int64)
    /// The user can no longer view a bucket (unshared, deleted, privacy narrowed, friendship ended).
    case bucketRemoved(bucket: Int64)
    /// The user, an owner, left an item with `alert` on behind: it is `distance` metres away, at `lat`, `lon`.
    case itemLeftBehind(item: Int64, distance: Double, lat: Double, lon: Double)
    /// The user is back with an item they had left behind.
    case itemReunited(item: Int64)
    /// A picture was posted where (or to the event) the connection watches.
    case pictureNew(PictureView)
    /// The stats channel's reading of the last second.
    case stats(StatsSnapshot, StatsRates?)
}

/// Why the domain ends a connection's session.
public enum SessionEnd: Sendable, Equatable {
    /// It did not authenticate in time.
    case authenticationTimeout
    /// Its upgrade token is unknown.
    case invalidToken
    /// Its token was revoked (a logout elsewhere).
    case tokenRevoked
    /// The token could not be checked just now (e.g. storage trouble); the client may retry.
    case checkFailed
    /// Its source address already has as many connections open as allowed.
    case tooManyConnections
    /// Its account was suspended by an admin.
    case suspended
}

/// Where the domain's events go. Called on the loop thread only.
public protocol HubEvents: AnyObject {
    /// Delivers `event` to every connection of each user in `users`, except `excluding`.
    func publish(_ event: HubEvent, toUsers users: [Int64], excluding: ConnectionID?)
    /// Delivers `event` to each of `connections` once.
    func publish(_ event: HubEvent, toConnections connections: [ConnectionID])
    /// `move.owner` moved and `viewer` may see it (approximately when `approximate`): the viewer's watching
    /// connections (`watching`, as `Sessions` knows them on this node) get that version, latest wins per owner.
    func positionMoved(_ move: inout PositionFanOut, to viewer: Int64, approximate: Bool, watching: ConnectionList)
    /// `viewer`'s watching connections get `position` now, replacing anything pending for its owner.
    func positionShown(_ position: VisiblePosition, to viewer: Int64)
    /// `viewer` may no longer see `owner`: pending positions are withdrawn and `pos.hidden` takes their place.
    func positionHidden(owner: Int64, from viewer: Int64)
    /// Withdraws `owner`'s pending position from `viewer`'s watching connections, without a word.
    func positionWithdrawn(owner: Int64, from viewer: Int64)
    /// Withdraws the pending positions of `owners` from one connection (it stopped watching).
    func positionsWithdrawn(owners: Set<Int64>, from connection: ConnectionID)
    /// An item's tracker moved: each of `connections` (watching items, of users who can view the item) gets
    /// `item.pos`, latest wins per item.
    func itemMoved(_ position: ItemPosition, to connections: [ConnectionID])
    /// Withdraws the pending `item.pos` of `items` from each of `connections`, without a word (access was lost, or
    /// the connection stopped watching items).
    func itemsWithdrawn(_ items: [Int64], from connections: [ConnectionID])
    /// Ends a connection.
    func end(_ connection: ConnectionID, _ why: SessionEnd)
}
