// A relic as shown on a map: everything except its content. It lives in the core because the hub's events carry
// it (`HubEvent.relicAppeared`); the relics feature (`Relics`, `RelicRecord`) keeps and opens relics.

/// A relic as shown on a map: everything except its content.
public struct RelicMarker: Sendable, Equatable {
    /// The relic's id.
    public var id: Int64
    /// Who left it.
    public var creatorID: Int64
    /// Where it was left (degrees).
    public var lat: Double
    public var lon: Double
    /// How close (metres) one must be to open it.
    public var radius: Double
    /// When it was left (ms since the epoch, server clock).
    public var createdAt: Int64
    /// When it expires (ms since the epoch); nil for a permanent relic.
    public var expiresAt: Int64?
    /// True when a password is needed to open it.
    public var locked: Bool
    /// True when the creator is withheld from whoever is shown the marker: the relic was left while its creator
    /// shared less than their precise position with some friend, so naming them would place them there and then.
    /// Only the creator's own views clear it (`shown(to:)`).
    public var creatorHidden: Bool

    /// Creates the value.
    public init(
        id: Int64, creatorID: Int64, lat: Double, lon: Double, radius: Double, createdAt: Int64,
        expiresAt: Int64?, locked: Bool, creatorHidden: Bool = false
    ) {
        self.id = id
        self.creatorID = creatorID
        self.lat = lat
        self.lon = lon
        self.radius = radius
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.locked = locked
        self.creatorHidden = creatorHidden
    }

    /// The marker as `viewer` may see it: its creator always sees themselves named.
    public func shown(to viewer: Int64) -> RelicMarker {
        guard creatorHidden, viewer == creatorID else { return self }
        var marker = self
        marker.creatorHidden = false
        return marker
    }

    /// True when the relic has expired at `now` (an expiry equal to now counts as expired).
    public func isExpired(at now: Int64) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt <= now
    }
}
