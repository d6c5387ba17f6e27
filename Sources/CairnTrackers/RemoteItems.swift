// Item positions beyond this process. With several nodes an item's tracker may report to one node while a member
// of its bucket watches items on another. The moving node still decides who may hear the move (the item's audience,
// read from the shared store at the time of the move) and hands the fix to this port once, with the users of that
// audience who are online on other nodes (`RemotePresence`); nobody outside the audience is ever listed. The
// viewers' node follows the items its watching connections may view (`follow` / `unfollow`, one call per
// connection and item: the port counts them), and what it hears back goes through `Trackers.remoteMoved`. A single
// node has no implementation and nothing changes. Loop thread only.
public import CairnCore

/// Where item moves for viewers on other nodes go, and which items this node's watchers want from them.
public protocol RemoteItems: AnyObject {
    /// A connection here started watching items and may view `item`: listen to its moves made on other nodes.
    func follow(_ item: Int64)
    /// One such connection stopped watching (or closed); the last one stops the listening.
    func unfollow(_ item: Int64)
    /// `position` (reported by `tracker`) for `viewers`: members of the item's audience now, online on other nodes.
    /// Never empty.
    func itemMoved(_ position: ItemPosition, tracker: Int64, to viewers: [Int64])
}
