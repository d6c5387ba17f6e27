// Presence beyond this process. With several nodes behind one balancer a friend may be connected to another node;
// `Sessions` still decides who is online here, and asks this port whether a user is online elsewhere. The domain
// owns the protocol and knows nothing of how it is answered (CairnCluster implements it over Redis; a single node
// has no implementation and nothing changes). Answers are synchronous and come from what the implementation last
// heard, so a read never waits on the network; every call is made on the loop thread.

/// Who is online on other nodes, as this node last heard it.
public protocol RemotePresence: AnyObject {
    /// True when `user` has a connection on another node.
    func isOnlineElsewhere(_ user: Int64) -> Bool
    /// `user` came online on this node (their first connection here) or went offline here (their last one closed).
    func localPresenceChanged(_ user: Int64, online: Bool)
}
