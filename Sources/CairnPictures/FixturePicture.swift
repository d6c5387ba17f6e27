// A generated picture for the pictures benchmark's bulk loading (`insertFixturePictures` of either store): the
// columns a page reads, without media or like rows. A plain value in the domain so that both stores take the same
// rows (CairnPostgres does not import CairnStore). Not used by the hub.

/// A generated picture.
public struct FixturePicture: Sendable {
    /// The poster.
    public var by: Int64
    /// Where: latitude.
    public var lat: Double
    /// Where: longitude.
    public var lon: Double
    /// Its likes (no like rows are written: pages read the count).
    public var likes: Int64
    /// When (ms).
    public var createdAt: Int64
    /// Its private event, if any (must exist: see `insertFixtureEvent`).
    public var privateEvent: Int64?

    /// Creates the value.
    public init(by: Int64, lat: Double, lon: Double, likes: Int64, createdAt: Int64, privateEvent: Int64?) {
        self.by = by
        self.lat = lat
        self.lon = lon
        self.likes = likes
        self.createdAt = createdAt
        self.privateEvent = privateEvent
    }
}
