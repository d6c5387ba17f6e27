// A place of interest (seed 001: ski areas, and any point an operator imports: peaks, cities, airports): a name, a
// category, a point, where it came from (a source and the id it has there, so a newer import updates rather than
// duplicates) and free attributes (elevation, address, url, …). Places are imported by operators, not created by
// users; in memory the hub keeps only what a nearest or search answer shows (`PlaceSummary`), and reads the
// attributes from the store when one place is asked for.
import CairnGeo

/// An attribute's value: text, a number or a flag.
public enum PlaceValue: Sendable, Equatable {
    case text(String)
    case number(Double)
    case flag(Bool)
}

/// One named attribute.
public struct PlaceAttribute: Sendable, Equatable {
    /// The attribute's name (e.g. `elevation`).
    public let name: String
    /// Its value.
    public let value: PlaceValue

    /// Creates the value.
    public init(_ name: String, _ value: PlaceValue) {
        self.name = name
        self.value = value
    }
}

/// What the hub keeps in memory about a place: enough for a nearest or search answer.
public struct PlaceSummary: Sendable, Equatable {
    /// The place's id in Cairn.
    public let id: Int64
    /// Its name.
    public let name: String
    /// Its category (e.g. `ski_area`).
    public let category: String
    /// Where it is.
    let point: GeoPoint
    /// Latitude in degrees.
    public var lat: Double { point.lat }
    /// Longitude in degrees.
    public var lon: Double { point.lon }

    /// Creates the value; nil when the coordinates are out of range.
    public init?(id: Int64, name: String, category: String, lat: Double, lon: Double) {
        guard let point = GeoPoint(lat: lat, lon: lon) else { return nil }
        self.init(id: id, name: name, category: category, point: point)
    }

    init(id: Int64, name: String, category: String, point: GeoPoint) {
        self.id = id
        self.name = name
        self.category = category
        self.point = point
    }
}

/// A place as written by an operator (import or `place.upsert`), before it has an id.
public struct PlaceDraft: Sendable, Equatable {
    /// Where the place comes from (an import's `--source`, `ops` for `place.upsert` by default).
    public var source: String
    /// Its id in that source; a draft with the (source, external id) of a stored place updates it.
    public var externalID: String?
    /// Its name.
    public var name: String
    /// Its category.
    public var category: String
    /// Latitude in degrees, in [-90, 90].
    public var lat: Double
    /// Longitude in degrees, in [-180, 180].
    public var lon: Double
    /// Free attributes, in order.
    public var attributes: [PlaceAttribute]

    /// Creates the value.
    public init(
        source: String, externalID: String?, name: String, category: String, lat: Double, lon: Double,
        attributes: [PlaceAttribute] = []
    ) {
        self.source = source
        self.externalID = externalID
        self.name = name
        self.category = category
        self.lat = lat
        self.lon = lon
        self.attributes = attributes
    }
}

/// A stored place with everything known about it (`place.get`).
public struct Place: Sendable, Equatable {
    /// The place's id in Cairn.
    public let id: Int64
    /// The draft it was written from.
    public let draft: PlaceDraft

    /// Creates the value.
    public init(id: Int64, draft: PlaceDraft) {
        self.id = id
        self.draft = draft
    }

    /// What memory keeps of it (nil only if its coordinates are out of range, which no writer stores).
    public var summary: PlaceSummary? {
        PlaceSummary(id: id, name: draft.name, category: draft.category, lat: draft.lat, lon: draft.lon)
    }
}

/// A place in a nearest answer, with its great-circle distance in metres from the position asked about.
public struct NearbyPlace: Sendable, Equatable {
    /// The place.
    public let place: PlaceSummary
    /// Metres (haversine, as `GeoPoint.distance(to:)` measures).
    public let distance: Double
}

/// A `places.nearest` request as decoded.
public struct NearestPlacesRequest: Sendable, Equatable {
    /// The position, or nil for the caller's last one.
    public var lat: Double?
    /// The position, or nil for the caller's last one.
    public var lon: Double?
    /// How many, 1…100; nil for 20.
    public var limit: Int64?
    /// Only this category.
    public var category: String?
    /// Only within this many metres.
    public var radius: Double?

    /// Creates the value.
    public init(
        lat: Double? = nil, lon: Double? = nil, limit: Int64? = nil, category: String? = nil, radius: Double? = nil
    ) {
        self.lat = lat
        self.lon = lon
        self.limit = limit
        self.category = category
        self.radius = radius
    }
}

/// How many places one source and category hold (`cairn places list`).
public struct PlaceCount: Sendable, Equatable {
    /// The source.
    public let source: String
    /// The category.
    public let category: String
    /// How many places.
    public let count: Int

    /// Creates the value.
    public init(source: String, category: String, count: Int) {
        self.source = source
        self.category = category
        self.count = count
    }
}
