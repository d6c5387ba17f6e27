// The cross-node side of position delivery (the domain's `RemoteFanOut`), next to `LocalDelivery` whose encodings
// and latest-wins slots it shares. Publishing (the owner's node): each level of a move is encoded once — the same
// `pos` bytes local watchers get — and handed to the cluster glue with, per level, the viewers elsewhere allowed
// it; hides and withdrawals likewise. Receiving (a viewer's node): a message's bytes go to the watching connections
// of its listed viewers, and only of those this node follows for that owner (a viewer here who is the owner's
// friend), into the same slot a local move would use (key = owner). The last bytes heard per (viewer, owner) are
// kept while the viewer is here, with their level, so a connection that starts watching later gets them — but only
// at a level this node's rules allow at that moment (a hide made here stops them), never once older than
// `watch_max_age`, and never after the link to Redis dropped (a hide published meanwhile was not heard: everything
// kept is forgotten, and the owners' nodes answer the viewer's next arrival under their rules). The node (CairnNodes)
// turns the calls into binary messages on Redis channels and back; this file knows no Redis.
public import CairnCore
public import CairnLiveMap
public import CairnLoop
import CairnSessions
public import CairnSocial

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
    private let clock: any Clock
    private let maxAgeMs: Int64
    /// Viewers here following each owner (friends of the owner connected here).
    private var followers: [Int64: Set<Int64>] = [:]
    /// The last bytes heard for each viewer here, per owner: their section's tag (0 precise, 1 approximate) and when.
    private var kept: [Int64: [Int64: (bytes: [UInt8], tag: UInt8, at: Int64)]] = [:]

    /// Sends a message about `owner` to the other nodes (set by the glue).
    public var send: ((_ kind: Kind, _ owner: Int64, _ sections: [Section]) -> Void)?
    /// This node starts (true) or stops (false) listening to `owner`: its first follower came, its last went.
    public var listen: ((_ owner: Int64, _ on: Bool) -> Void)?
    /// What `viewer` may see of `owner` by this node's rules now (set at attach; nil: whatever the sender listed).
    /// A position the owner's node encoded before a hide it had not applied yet is held back here if this node
    /// already has.
    var allowed: ((_ owner: Int64, _ viewer: Int64) -> ShareLevel)?
    /// `viewer` here wants `owner`'s current position from the owner's node (set by the glue: asked once the
    /// subscription to the owner is confirmed).
    public var wanted: ((_ owner: Int64, _ viewer: Int64) -> Void)?

    init(local: LocalDelivery, sessions: Sessions, clock: any Clock, maxAgeMs: Int64) {
        self.local = local
        self.sessions = sessions
        self.clock = clock
        self.maxAgeMs = maxAgeMs
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

    @discardableResult
    public func follow(_ owner: Int64, viewer: Int64) -> Bool {
        let first = followers[owner] == nil
        guard followers[owner, default: []].insert(viewer).inserted else { return false }
        if first { listen?(owner, true) }
        return true
    }

    public func positionWanted(owner: Int64, by viewer: Int64) { wanted?(owner, viewer) }

    public func unfollow(_ owner: Int64, viewer: Int64) {
        forget(owner, for: viewer)
        guard followers[owner]?.remove(viewer) != nil else { return }
        guard followers[owner]?.isEmpty ?? false else { return }
        followers[owner] = nil
        listen?(owner, false)
    }

    public func watchStarted(_ connection: ConnectionID, viewer: Int64, level: (Int64) -> ShareLevel) {
        guard let outbound = local.outbound, let heard = kept[viewer] else { return }
        let oldest = clock.now() - maxAgeMs
        for (owner, entry) in heard.sorted(by: { $0.key < $1.key }) where entry.at >= oldest {
            // Precise bytes only to a viewer still allowed precise; approximate ones to any viewer not hidden.
            switch level(owner) {
            case .precise: break
            case .approximate where entry.tag != 0: break
            default: continue
            }
            outbound.sendLatest(connection, key: owner, entry.bytes)
        }
    }

    /// The link to Redis dropped: a hide published meanwhile will not be heard, so nothing kept may be replayed.
    public func linkLost() { kept.removeAll() }

    /// A message from another node about `owner` (decoded by the glue).
    public func received(_ kind: Kind, owner: Int64, sections: [Section]) {
        guard let following = followers[owner] else { return }
        let outbound = local.outbound
        let now = clock.now()
        for section in sections {
            // Only what a node of ours encodes goes to a socket: one `pos` or `pos.hidden` event, one line.
            guard kind == .withdrawn || Self.isPositionEvent(section.payload) else { continue }
            for viewer in section.viewers where following.contains(viewer) {
                if kind == .shown, let level = allowed?(owner, viewer) {
                    // Section 0 is precise, 1 approximate: never more than this node's rules allow now.
                    let permitted = section.tag == 0 ? level == .precise : level != .hidden
                    guard permitted else { continue }
                }
                switch kind {
                case .shown: kept[viewer, default: [:]][owner] = (section.payload, section.tag, now)
                case .hidden, .withdrawn: forget(owner, for: viewer)
                }
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

    private func forget(_ owner: Int64, for viewer: Int64) {
        guard kept[viewer]?.removeValue(forKey: owner) != nil, kept[viewer]?.isEmpty ?? false else { return }
        kept[viewer] = nil
    }

    private static let positionPrefix = Array(#"{"ev":"pos"#.utf8)

    /// True for one JSON object of a `pos…` event on one line, as `LocalDelivery` encodes them.
    static func isPositionEvent(_ payload: [UInt8]) -> Bool {
        payload.count > positionPrefix.count && payload.starts(with: positionPrefix)
            && payload.last == UInt8(ascii: "}")
            && !payload.contains(UInt8(ascii: "\n"))
    }
}
