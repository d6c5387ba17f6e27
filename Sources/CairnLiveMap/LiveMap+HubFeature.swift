// The live map as the hub sees it: the events port, the tick that purges old position history, and what it forgets
// when a session ends, a user goes offline or users are purged. The snapshot is not part of the tick here: the hub
// takes it last, after every feature's tick.
package import CairnCore
package import CairnLoop

extension LiveMap: HubFeature {
    package func attach(_ events: any HubEvents) { self.events = events }

    package func tick(now: Int64) { purgeHistory(now: now) }

    package func sessionEnds(on connection: ConnectionID, user: Int64) { stopWatching(connection, user: user) }

    /// Offline: the next session's first fix must be confirmed again. Several nodes: listens to the friends' moves
    /// made elsewhere while the user is online here (the hub calls this before the other nodes hear of it).
    package func presenceChangedHere(_ user: Int64, online: Bool) {
        if !online { sessionEnded(user) }
        viewerPresenceChanged(user, online: online)
    }

    package func usersPurged(_ users: [Int64], relics: [Int64], items: [Int64]) { forget(users: users) }
}
