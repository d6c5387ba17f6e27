// The stats channel as the hub sees it: the events port, and the watchers of a session or a connection that ended.
package import CairnCore
package import CairnLoop

extension StatsChannel: HubFeature {
    package func attach(_ events: any HubEvents) { self.events = events }

    package func sessionEnds(on connection: ConnectionID, user: Int64) { unwatch(connection) }

    package func connectionClosed(_ connection: ConnectionID) { unwatch(connection) }
}
