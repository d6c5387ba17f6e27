// The hub's side of running as one of several nodes: where the composition plugs in presence on other nodes and
// the reading of the link to them, and how a change of a user's presence elsewhere reaches friends connected here.
// A single node sets none of it and behaves exactly as before.

extension Hub {
    /// Presence on other nodes (nil: a single node). Set on the loop before serving.
    public var remotePresence: (any RemotePresence)? {
        get { sessions.remotePresence }
        set { sessions.remotePresence = newValue }
    }

    /// Positions for viewers on other nodes and from owners on other nodes (nil: a single node). Set on the loop
    /// before serving.
    public var remoteFanOut: (any RemoteFanOut)? {
        get { liveMap.remote }
        set { liveMap.remote = newValue }
    }

    /// `viewer` came online on another node where it was not before (a new node, even if it is online on a third):
    /// owners connected here send it their current positions, at the level it may see.
    public func remoteViewerArrived(_ viewer: Int64) {
        confinement.assertOnLoop()
        liveMap.remoteViewerArrived(viewer)
    }

    /// Reports the node's link to the other nodes for /healthz, the stats channel and /metrics; nil on one node.
    public var clusterReading: (() -> ClusterReading)? {
        get { operations.clusterReading }
        set { operations.clusterReading = newValue }
    }

    /// `user` came online on another node (their first connection anywhere else) or went offline on every other
    /// node. Friends connected here hear it, unless the user is connected here too (then nothing changed for them).
    public func remotePresenceChanged(_ user: Int64, online: Bool) {
        confinement.assertOnLoop()
        guard !sessions.isOnline(user) else { return }
        social.presenceChanged(user, online: online)
    }
}
