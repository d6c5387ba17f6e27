// A safe zone (seed 002): a circle a user names (home, the office) inside which their items never count as left
// behind. Zones are per user, stored, and kept in memory for the left-behind rule; the store enforces the per-user
// count in the same transaction as the insert.
public import CairnGeo

/// One safe zone.
public struct SafeZone: Sendable, Equatable {
    /// Store-assigned id.
    public var id: Int64
    /// Whose zone it is.
    public var owner: Int64
    /// Its name.
    public var name: String
    /// Its centre's latitude, degrees.
    public var lat: Double
    /// Its centre's longitude, degrees.
    public var lon: Double
    /// Its radius, metres.
    public var radius: Double

    /// Creates the value.
    public init(id: Int64, owner: Int64, name: String, lat: Double, lon: Double, radius: Double) {
        self.id = id
        self.owner = owner
        self.name = name
        self.lat = lat
        self.lon = lon
        self.radius = radius
    }

    /// True when `point` lies inside the circle (its edge included).
    public func contains(_ point: GeoPoint) -> Bool {
        guard let centre = GeoPoint(lat: lat, lon: lon) else { return false }
        return centre.distance(to: point) <= radius
    }
}

/// Why a safe zone store refused a write.
public enum SafeZoneStoreError: Error, Equatable {
    /// The user already has `limit` zones, as many as allowed.
    case tooMany(limit: Int)
}

/// Durable storage for safe zones.
public protocol SafeZoneStore: Sendable {
    /// Adds a zone for `owner`; throws `SafeZoneStoreError.tooMany` when they already have `limit`.
    func addSafeZone(
        owner: Int64, name: String, lat: Double, lon: Double, radius: Double, limit: Int
    ) async throws -> SafeZone
    /// Removes `owner`'s zone `id`; false when they have no such zone.
    func removeSafeZone(id: Int64, owner: Int64) async throws -> Bool
}
