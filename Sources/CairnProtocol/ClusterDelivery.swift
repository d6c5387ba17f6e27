// The cross-node side of position delivery (the domain's `RemoteFanOut`), next to `LocalDelivery` whose encodings
// and latest-wins slots it shares. Publishing (the owner's node): each level of a move is encoded once — the same
// `pos` bytes local watchers get — and handed to the cluster glue with, per level, the viewers elsewhere allowed
// it; hides and withdrawals likewise. Receiving (a viewer's node): a message's bytes go to the watching connections
// of its listed viewers, and only of those this node follows for that owner (a viewer here who is the owner's
// friend), into the same slot a local move would use (key = owner). Nothing heard is kept for later: bytes encoded
// under the owner's node's rules at one moment cannot be checked again against a hide this node missed (Redis away)
// or one made here, so a viewer who starts watching gets other nodes' owners from their next move or from the owner's
// node's answer to the viewer's arrival, both encoded under the rules in force. The glue (CairnApp) turns the calls
// into binary messages on Redis channels and back; this file knows no Redis.
import CairnDomain
import CairnLoop

/// Positions to and from viewers on other nodes. Loop thread only.
public final class ClusterDelivery: RemoteFanOut {
    /// What a cross-node position message says.
    public enum Kind: UInt8, Sendable {
        /// A version of a position (a move, or one shown outside a move): viewers' slots get the bytes.
        case shown = 1
        /// `pos.hidden`: the viewers' slots get the bytes.
        case hidden = 2
        /// The viewers' pending position goes, without a word (no bytes).
        case withdrawn = 3
    }

    /// One version in a message: its tag (0 precise, 1 approximate), who may have it, the bytes they get.
    public typealias Section = (tag: UInt8, viewers: [Int64], payload: [UInt8])

    private let local: LocalDelivery
    private let sessions: Sessions
    /// Viewers here following each owner (friends of the owner connected here).
    private var followers: [Int64: Set<Int64>] = [:]

    /// Sends a message about `owner` to the other nodes (set by the glue).
    public var send: ((_ kind: Kind, _ owner: Int64, _ sections: [Section]) -> Void)?
    /// This node starts (true) or stops (false) listening to `owner`: its first follower came, its last went.
    public var listen: ((_ owner: Int64, _ on: Bool) -> Void)?

    init(local: LocalDelivery, sessions: Sessions) {
        self.local = local
        self.sessions = sessions
    }

    /// Owners this node listens to.
    public var followedCount: Int { followers.count }

    // MARK: RemoteFanOut (the owner's node)

    public func positionMoved(_ move: inout PositionFanOut, precise: [Int64], approximate: [Int64]) {
        guard let send else { return }
        var sections: [Section] = []
        if !precise.isEmpty, let bytes = local.encoded(&move, approximate: false) {
            sections.append((0, precise, bytes))
        }
        if !approximate.isEmpty, let bytes = local.encoded(&move, approximate: true) {
            sections.append((1, approximate, bytes))
        }
        guard !sections.isEmpty else { return }
        send(.shown, move.owner, sections)
    }

    public func positionShown(_ position: VisiblePosition, to viewer: Int64) {
        send?(.shown, position.owner, [(position.approximate ? 1 : 0, [viewer], local.positionEvent(position))])
    }

    public func positionHidden(owner: Int64, from viewer: Int64) {
        send?(.hidden, owner, [(0, [viewer], local.hiddenEvent(owner: owner))])
    }

    public func positionWithdrawn(owner: Int64, from viewer: Int64) {
        send?(.withdrawn, owner, [(0, [viewer], [])])
    }

    // MARK: RemoteFanOut (the viewers' node)

    public func follow(_ owner: Int64, viewer: Int64) {
        let first = followers[owner] == nil
        guard followers[owner, default: []].insert(viewer).inserted else { return }
        if first { listen?(owner, true) }
    }

    public func unfollow(_ owner: Int64, viewer: Int64) {
        guard followers[owner]?.remove(viewer) != nil else { return }
        guard followers[owner]?.isEmpty ?? false else { return }
        followers[owner] = nil
        listen?(owner, false)
    }

    /// A message from another node about `owner` (decoded by the glue).
    public func received(_ kind: Kind, owner: Int64, sections: [Section]) {
        guard let following = followers[owner] else { return }
        let outbound = local.outbound
        for section in sections {
            // Only what a node of ours encodes goes to a socket: one `pos` or `pos.hidden` event, one line.
            guard kind == .withdrawn || Self.isPositionEvent(section.payload) else { continue }
            for viewer in section.viewers where following.contains(viewer) {
                for connection in sessions.watchingConnections(of: viewer) {
                    if kind == .withdrawn {
                        outbound?.dropLatest(connection, key: owner)
                    } else {
                        outbound?.sendLatest(connection, key: owner, section.payload)
                    }
                }
            }
        }
    }

    private static let positionPrefix = Array(#"{"ev":"pos"#.utf8)

    /// True for one JSON object of a `pos…` event on one line, as `LocalDelivery` encodes them.
    static func isPositionEvent(_ payload: [UInt8]) -> Bool {
        payload.count > positionPrefix.count && payload.starts(with: positionPrefix)
            && payload.last == UInt8(ascii: "}")
            && !payload.contains(UInt8(ascii: "\n"))
    }
}
