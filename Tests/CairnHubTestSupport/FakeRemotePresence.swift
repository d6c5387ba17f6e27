// Another node's presence, faked for the tests of the `RemotePresence` seam and of the features that ask it (the live
// map's and the trackers' fan-out to other nodes).
public import CairnSessions

/// Another node's presence as a set, and what this node told it.
public final class FakeRemotePresence: RemotePresence {
    public init() {}
    public var elsewhere: Set<Int64> = []
    public var told: [String] = []
    public func isOnlineElsewhere(_ user: Int64) -> Bool { elsewhere.contains(user) }
    public func localPresenceChanged(_ user: Int64, online: Bool) { told.append("\(online ? "+" : "-")\(user)") }
}
