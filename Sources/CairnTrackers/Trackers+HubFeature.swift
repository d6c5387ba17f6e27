// Trackers and safe zones as the hub sees them: the events port, the tick (left-behind grace times), items'
// positions watched by a session or a connection, owners' presence, and what a purge deleted.
package import CairnCore
package import CairnLoop

extension Trackers: HubFeature {
    package func attach(_ events: any HubEvents) { self.events = events }

    package func tick(now: Int64) { tickLeftBehind(now: now) }

    /// The connection stays: its pending `item.pos` go.
    package func sessionEnds(on connection: ConnectionID, user: Int64) { stopWatching(connection, withdraw: true) }

    package func connectionClosed(_ connection: ConnectionID) { stopWatching(connection) }

    /// Their alerted items, from wherever they report.
    package func presenceChangedHere(_ user: Int64, online: Bool) { ownerPresenceChanged(user, online: online) }

    /// Buckets that lost every owner went with their items; co-owned buckets stay, and the purged owners are no
    /// longer alerted.
    package func usersPurged(_ users: [Int64], relics: [Int64], items: [Int64]) {
        itemsGone(items)
        ownersGone(users)
    }
}

extension SafeZones: HubFeature {
    package func usersPurged(_ users: [Int64], relics: [Int64], items: [Int64]) { forget(users: users) }
}
