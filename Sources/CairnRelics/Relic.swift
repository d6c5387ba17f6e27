// What a relic is, in the shapes the hub needs. A `RelicMarker` (in the core, as the hub's events carry it) is what
// lives in memory for every live relic and what anyone nearby may see: place, radius, creator, times and whether it
// is locked, never the text, media or password. A `RelicRecord` is the stored row with everything, read from the
// store only when someone is allowed to open the relic (so memory holds markers, not up to 2,000 characters of text
// per relic).
public import CairnCore

/// A relic as stored: the marker plus its content and password record.
public struct RelicRecord: Sendable, Equatable {
    /// Place, radius, times and creator.
    public var marker: RelicMarker
    /// The message left with it.
    public var text: String
    /// The id of its media (a SHA-256 hex string), if any.
    public var mediaID: String?
    /// The scrypt record of its password, if any.
    public var passwordHash: String?

    /// Creates the value; `marker.locked` follows `passwordHash`.
    public init(marker: RelicMarker, text: String, mediaID: String?, passwordHash: String?) {
        var marker = marker
        marker.locked = passwordHash != nil
        self.marker = marker
        self.text = text
        self.mediaID = mediaID
        self.passwordHash = passwordHash
    }
}

/// A relic about to be stored (the store assigns the id).
public struct NewRelic: Sendable, Equatable {
    /// Who leaves it.
    public var creatorID: Int64
    /// Where (degrees).
    public var lat: Double
    public var lon: Double
    /// Opening radius (metres).
    public var radius: Double
    /// The message.
    public var text: String
    /// Media owned by the creator, if any.
    public var mediaID: String?
    /// scrypt record of the password, if any.
    public var passwordHash: String?
    /// When (ms since the epoch).
    public var createdAt: Int64
    /// Expiry (ms since the epoch), nil for permanent.
    public var expiresAt: Int64?
    /// True when the creator is withheld from everyone else (see `RelicMarker.creatorHidden`).
    public var creatorHidden: Bool

    /// Creates the value.
    public init(
        creatorID: Int64, lat: Double, lon: Double, radius: Double, text: String, mediaID: String?,
        passwordHash: String?, createdAt: Int64, expiresAt: Int64?, creatorHidden: Bool = false
    ) {
        self.creatorHidden = creatorHidden
        self.creatorID = creatorID
        self.lat = lat
        self.lon = lon
        self.radius = radius
        self.text = text
        self.mediaID = mediaID
        self.passwordHash = passwordHash
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }

    /// The record this becomes once stored under `id`.
    public func record(id: Int64) -> RelicRecord {
        RelicRecord(
            marker: RelicMarker(
                id: id, creatorID: creatorID, lat: lat, lon: lon, radius: radius,
                createdAt: createdAt, expiresAt: expiresAt, locked: passwordHash != nil,
                creatorHidden: creatorHidden),
            text: text, mediaID: mediaID, passwordHash: passwordHash)
    }
}
