// Pictures and events as the hub sees them: the events port, the live watchers of a session or a connection that
// ended, and the media signer for pictures' URLs.
package import CairnCore
package import CairnLoop
import CairnMedia

extension Pictures: HubFeature {
    package func attach(_ events: any HubEvents) { self.events = events }

    package func sessionEnds(on connection: ConnectionID, user: Int64) { stopWatching(connection) }

    package func connectionClosed(_ connection: ConnectionID) { stopWatching(connection) }
}

extension PictureEvents: HubFeature {}

extension Pictures: ShowsMedia {}
