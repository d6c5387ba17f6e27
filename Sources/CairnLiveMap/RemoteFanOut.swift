// Positions beyond this process. With several nodes a viewer may be connected to another node than the owner who
// moves; the live map still decides, here on the owner's node, who may see what, and hands the result to this port
// with the viewers already sorted by level: the port encodes each level once and sends it to the nodes of the
// listed viewers, which deliver it to their own connections of those viewers only. Hidden viewers are never listed.
// Which viewers are elsewhere comes from `RemotePresence` (the presence mirror). The port also hears which owners
// this node's viewers may see (`follow` / `unfollow`, per pair, idempotent), so the node listens to those owners'
// moves made elsewhere, and when a viewer here starts watching (to show again what other nodes last sent it).
// A single node has no implementation and nothing changes. Loop thread only.

public import CairnCore
public import CairnLoop
public import CairnSocial

/// Where positions for viewers on other nodes go, and what this node's viewers want from them.
public protocol RemoteFanOut: AnyObject {
    /// `viewer`, connected here, is a friend of `owner`: listen to `owner`'s moves made on other nodes. True when
    /// the pair is new.
    @discardableResult
    func follow(_ owner: Int64, viewer: Int64) -> Bool
    /// `viewer`, connected here, has just started following `owner`, who is connected elsewhere (a friendship
    /// began: a viewer already follows every friend while connected): what the owner's node sent before this node
    /// listened is lost for it, so
    /// ask that node for the owner's current position once this node's subscription is in place.
    func positionWanted(owner: Int64, by viewer: Int64)
    /// `viewer` left this node or is no longer `owner`'s friend: forget what was heard for it about `owner`.
    func unfollow(_ owner: Int64, viewer: Int64)
    /// `move` for viewers on other nodes: `precise` may see the precise fix, `approximate` the approximate one
    /// (only listed when `move.approximate` is set). At least one list is non-empty.
    func positionMoved(_ move: inout PositionFanOut, precise: [Int64], approximate: [Int64])
    /// `viewer`, on another node, gets `position` now (a new friend, a changed rule, its arrival there).
    func positionShown(_ position: VisiblePosition, to viewer: Int64)
    /// `viewer`, on another node, may no longer see `owner`: `pos.hidden` there.
    func positionHidden(owner: Int64, from viewer: Int64)
    /// `viewer`, on another node, is no longer `owner`'s friend: what is pending there for `owner` goes.
    func positionWithdrawn(owner: Int64, from viewer: Int64)
    /// A connection of `viewer` here started watching: it gets what other nodes last sent for `viewer`, each owner
    /// only at a level `level(owner)` (this node's rules, now) still allows.
    func watchStarted(_ connection: ConnectionID, viewer: Int64, level: (Int64) -> ShareLevel)
}
