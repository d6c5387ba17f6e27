// Sessions and guests' expiry as the hub sees them: the events port, the tick (authentication deadlines; guests'
// last activity and purge), and a purge's deleted accounts, whose sessions still open end here first.
package import CairnCore

extension Sessions: HubFeature {
    package func attach(_ events: any HubEvents) { self.events = events }

    package func tick(now: Int64) { closeExpiredAuthentications(now: now) }

    /// Connected after the purge began: their account is gone.
    package func usersPurged(_ users: [Int64], relics: [Int64], items: [Int64]) { endSessions(of: users) }
}

extension GuestExpiry: HubFeature {}
