// What the hub asks of every feature: the few things it does to all of them alike. It attaches the events port to
// each, ticks each about once a second, and tells each of the lifecycle facts that any feature may have state about
// (a session ending, a connection gone, a user's presence here changing, users purged). A feature implements only
// what it needs; the rest does nothing. The hub keeps its features in one ordered list and loops over it, so adding
// a feature is one conformance and one entry in that list, not a line in every fan-out.
//
// What one feature needs from another in particular (a view changed: show the current position; a move: roam the
// relics) is not here: those are hooks the owning feature declares and the hub wires one by one, because they are
// the graph between features. Nothing on the per-position path goes through this protocol.
package import CairnLoop

/// A feature as the hub sees it: attached to the events port, ticked, told of sessions, connections, presence and
/// purges. Loop thread only. Every requirement has a default that does nothing.
package protocol HubFeature: AnyObject {
    /// Sends the feature's events to `events` from now on.
    func attach(_ events: any HubEvents)
    /// Periodic housekeeping, about once a second (deadlines, expiry, purges, batched writes), in the hub's order.
    func tick(now: Int64)
    /// `connection` is about to lose `user`'s account (closing, logging out, switching, revoked); the connection may
    /// stay open. Forget what was shown to that session.
    func sessionEnds(on connection: ConnectionID, user: Int64)
    /// `connection` closed (after its session, if any, ended).
    func connectionClosed(_ connection: ConnectionID)
    /// `user` came online on this node (true) or went offline on it (false).
    func presenceChangedHere(_ user: Int64, online: Bool)
    /// The accounts `users` were deleted (guests' purge), with their `relics` and the `items` of buckets that lost
    /// every owner; their sessions were ended first.
    func usersPurged(_ users: [Int64], relics: [Int64], items: [Int64])
}

extension HubFeature {
    package func attach(_ events: any HubEvents) {}
    package func tick(now: Int64) {}
    package func sessionEnds(on connection: ConnectionID, user: Int64) {}
    package func connectionClosed(_ connection: ConnectionID) {}
    package func presenceChangedHere(_ user: Int64, online: Bool) {}
    package func usersPurged(_ users: [Int64], relics: [Int64], items: [Int64]) {}
}
