// An event port that records what the domain told it, in domain terms (no JSON), so a feature's events can be
// checked without the protocol layer. It also plays the delivery's part in a fan-out: it "encodes" a version of a
// move only when the move does not carry it yet, and counts how often it did, so a test can see each version is
// encoded once per move however many viewers share it.
public import CairnCore
public import CairnLoop

/// Records the domain's events. Loop thread (the test) only.
public final class RecordingEvents: HubEvents {
    /// One position delivery.
    public struct Moved: Equatable {
        /// Whose position.
        public var owner: Int64
        /// To whom.
        public var viewer: Int64
        /// The version delivered.
        public var fix: Fix
        /// True for the approximate version.
        public var approximate: Bool
        /// The connections it went to.
        public var watching: [ConnectionID]
    }

    /// Published events: their names and addressees.
    public private(set) var published: [(name: String, users: [Int64], connections: [ConnectionID])] = []
    /// Events published to users, whole, in order.
    public private(set) var toUsers: [(event: HubEvent, users: [Int64])] = []
    /// Position deliveries, in order.
    public private(set) var moved: [Moved] = []
    /// Positions shown outside a move (a new friend, a changed rule).
    public private(set) var shown: [(position: VisiblePosition, viewer: Int64)] = []
    /// Owners hidden from viewers.
    public private(set) var hidden: [(owner: Int64, viewer: Int64)] = []
    /// Positions withdrawn from viewers (a friendship ended).
    public private(set) var withdrawn: [(owner: Int64, viewer: Int64)] = []
    /// Sessions ended.
    public private(set) var ended: [(connection: ConnectionID, why: SessionEnd)] = []
    /// How many versions of moves were encoded.
    public private(set) var encodings = 0

    /// Items' positions delivered, in order.
    public private(set) var itemsMoved: [(position: ItemPosition, connections: [ConnectionID])] = []

    /// Items' pending positions withdrawn, in order.
    public private(set) var itemsWithdrawn: [(items: [Int64], connections: [ConnectionID])] = []

    /// Creates an empty recorder.
    public init() {}

    public func itemsWithdrawn(_ items: [Int64], from connections: [ConnectionID]) {
        itemsWithdrawn.append((items, connections))
    }

    public func itemMoved(_ position: ItemPosition, to connections: [ConnectionID]) {
        itemsMoved.append((position, connections))
    }

    /// Forgets everything recorded.
    public func clear() {
        published = []
        toUsers = []
        itemsMoved = []
        itemsWithdrawn = []
        moved = []
        shown = []
        hidden = []
        withdrawn = []
        ended = []
        encodings = 0
    }

    public func publish(_ event: HubEvent, toUsers users: [Int64], excluding: ConnectionID?) {
        published.append((Self.name(event), users, []))
        toUsers.append((event, users))
    }

    public func publish(_ event: HubEvent, toConnections connections: [ConnectionID]) {
        published.append((Self.name(event), [], connections))
    }

    public func positionMoved(
        _ move: inout PositionFanOut, to viewer: Int64, approximate: Bool,
        watching: ConnectionList
    ) {
        let fix: Fix
        if approximate {
            fix = move.approximate!
            if move.encodedApproximate == nil {
                encodings += 1
                move.encodedApproximate = []
            }
        } else {
            fix = move.precise
            if move.encodedPrecise == nil {
                encodings += 1
                move.encodedPrecise = []
            }
        }
        moved.append(
            Moved(owner: move.owner, viewer: viewer, fix: fix, approximate: approximate, watching: Array(watching)))
    }

    public func positionShown(_ position: VisiblePosition, to viewer: Int64) { shown.append((position, viewer)) }

    public func positionHidden(owner: Int64, from viewer: Int64) { hidden.append((owner, viewer)) }

    public func positionWithdrawn(owner: Int64, from viewer: Int64) { withdrawn.append((owner, viewer)) }

    public func positionsWithdrawn(owners: Set<Int64>, from connection: ConnectionID) {}

    public func end(_ connection: ConnectionID, _ why: SessionEnd) { ended.append((connection, why)) }

    private static func name(_ event: HubEvent) -> String {
        switch event {
        case .presence(_, let online): return online ? "presence.online" : "presence.offline"
        case .friendRequest: return "friend.request"
        case .friendAccepted: return "friend.accepted"
        case .friendRemoved: return "friend.removed"
        case .chatMessage: return "chat.msg"
        case .chatRead: return "chat.read"
        case .relicAppeared: return "relic.appear"
        case .relicVanished: return "relic.vanish"
        case .relicExpired: return "relic.expired"
        case .pictureNew: return "picture.new"
        case .bucketChanged: return "bucket.changed"
        case .bucketRemoved: return "bucket.removed"
        case .itemLeftBehind: return "item.left_behind"
        case .itemReunited: return "item.reunited"
        case .stats: return "stats"
        }
    }
}
