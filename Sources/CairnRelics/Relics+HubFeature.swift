// Relics as the hub sees them: the events port, the tick (expiry and the purge of old relics), and the markers
// shown to a session, a connection or a user, forgotten when those end; a purge's deleted relics; the media signer
// for their media URLs.
package import CairnCore
package import CairnLoop
import CairnMedia

extension Relics: HubFeature {
    package func attach(_ events: any HubEvents) { self.events = events }

    package func tick(now: Int64) {
        expire(now: now)
        purgeOld(now: now)
    }

    /// The markers it was shown were shown to that account.
    package func sessionEnds(on connection: ConnectionID, user: Int64) { forget(connection: connection) }

    package func connectionClosed(_ connection: ConnectionID) { forget(connection: connection) }

    package func presenceChangedHere(_ user: Int64, online: Bool) {
        if !online { forget(user: user) }
    }

    package func usersPurged(_ users: [Int64], relics: [Int64], items: [Int64]) { purged(relics) }
}

extension Relics: ShowsMedia {}
