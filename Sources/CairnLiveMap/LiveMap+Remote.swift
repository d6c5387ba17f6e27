import CairnCore
import CairnSessions
import CairnSocial
// The live map's side of several nodes (`RemoteFanOut`): which owners this node's viewers may see (so the node
// listens to those owners' moves made elsewhere), and what viewers on other nodes must hear outside a move — a new
// friend or a changed rule (shown, or hidden), a friendship that ended (withdrawn), and the current positions of
// owners connected here when a viewer arrives on another node (its snapshot). Privacy is applied here, on the
// owner's node, exactly as for a local viewer. A single node has no `remote` and none of this runs.

extension LiveMap {
    /// `user` came online here (first connection) or went offline here (last one closed): follow or unfollow the
    /// user's friends. Call before the presence change is told to other nodes, so this node already listens
    /// when the owners' nodes answer the arrival.
    package func viewerPresenceChanged(_ user: Int64, online: Bool) {
        guard let remote else { return }
        for owner in social.friends(of: user) {
            if online {
                remote.follow(owner, viewer: user)
            } else {
                remote.unfollow(owner, viewer: user)
            }
        }
    }

    /// `viewer` arrived on another node: the owners connected here whom it may see send it where they are, so its
    /// map there is not empty until they move. An owner it may not see withdraws whatever that node may still hold
    /// for it (a hide that node missed while Redis was away), without a word.
    package func remoteViewerArrived(_ viewer: Int64) {
        guard let remote else { return }
        let now = clock.now()
        for owner in social.friends(of: viewer).sorted() where sessions.isOnline(owner) {
            if let position = visiblePosition(of: owner, to: viewer, now: now) {
                remote.positionShown(position, to: viewer)
            } else if speaksFor(owner, to: viewer, now: now) {
                remote.positionWithdrawn(owner: owner, from: viewer)
            }
        }
    }

    /// A node where `viewer` is connected asks for `owner`'s current position (it has just followed the owner, for a
    /// friendship that began elsewhere, and what was sent before its subscription was lost for it): when the owner
    /// is connected here, the position goes to it at the viewer's level, or a withdrawal.
    package func remoteViewerAsked(owner: Int64, viewer: Int64) {
        guard let remote, sessions.isOnline(owner), social.areFriends(owner, viewer) else { return }
        let now = clock.now()
        if let position = visiblePosition(of: owner, to: viewer, now: now) {
            remote.positionShown(position, to: viewer)
        } else if speaksFor(owner, to: viewer, now: now) {
            remote.positionWithdrawn(owner: owner, from: viewer)
        }
    }

    /// True when this node may withdraw `owner`'s position from `viewer` on another node: the viewer may not see
    /// the owner, or this node holds a fix of the owner's. An owner connected here who moves through another node
    /// has no fix here; that node shows the position, and a withdrawal from here could reach the viewer's node
    /// after it and remove it from the viewer's slot.
    private func speaksFor(_ owner: Int64, to viewer: Int64, now: Int64) -> Bool {
        fixes[owner] != nil || level(of: owner, to: viewer, now: now) == .hidden
    }

    /// A viewer's view of `owner` changed or a friendship began: follow it if the viewer is here; if the viewer is
    /// on another node, say it is hidden, or (when the owner is connected here and this node holds a fix of theirs)
    /// show the current position at the viewer's level.
    func showRemotely(_ owner: Int64, to viewer: Int64) {
        guard let remote else { return }
        // Only a friend follows (a rule reverted after an unfriend that raced it must not take a subscription that
        // no unfriend will release).
        let now = clock.now()
        if sessions.isOnline(viewer), social.areFriends(owner, viewer), remote.follow(owner, viewer: viewer),
            sessions.remotePresence?.isOnlineElsewhere(owner) ?? false,
            level(of: owner, to: viewer, now: now) != .hidden
        {
            remote.positionWanted(owner: owner, by: viewer)
        }
        guard sessions.remotePresence?.isOnlineElsewhere(viewer) ?? false else { return }
        if level(of: owner, to: viewer, now: now) == .hidden {
            remote.positionHidden(owner: owner, from: viewer)
        } else if sessions.isOnline(owner), fixes[owner] != nil {
            // At a lower level with no fix to show at it, what the viewer's node holds goes (only from a node that
            // holds a fix: see `speaksFor`).
            if let position = visiblePosition(of: owner, to: viewer, now: now) {
                remote.positionShown(position, to: viewer)
            } else {
                remote.positionWithdrawn(owner: owner, from: viewer)
            }
        }
    }

    /// A friendship ended: stop following; a viewer on another node loses what is pending there for `owner`.
    func withdrawRemotely(_ owner: Int64, from viewer: Int64) {
        guard let remote else { return }
        remote.unfollow(owner, viewer: viewer)
        guard sessions.remotePresence?.isOnlineElsewhere(viewer) ?? false else { return }
        remote.positionWithdrawn(owner: owner, from: viewer)
    }
}
