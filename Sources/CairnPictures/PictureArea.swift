// The ground a nearby page covers, in the terms a store indexes by: the exact bounding box of a circle on the
// sphere (latitude bounds, and one or two longitude ranges, two when it crosses ±180°) and the longitude strips
// (0.001° wide) it spans. Pictures are indexed by strip then latitude, so a box is read with one index seek per
// strip; near the poles, where a box spans too many strips, one range per longitude range instead. Pure geometry:
// stores need no spherical trigonometry of their own.
public import CairnCore
public import CairnGeo

#if canImport(Glibc)
import Glibc
#endif

/// A circle's bounding box and the strips it spans.
public struct PictureArea: Sendable {
    /// Width of a longitude strip, in degrees (about 73 m at 48°N).
    public static let stripDegrees = 0.001
    /// Above this many strips a box is read with one range per longitude range instead.
    public static let maxStripSeeks = 1_000

    /// The southern bound (degrees).
    public var latMin: Double
    /// The northern bound (degrees).
    public var latMax: Double
    /// The longitude ranges (west, east), one or two.
    public var lons: [(Double, Double)]

    /// The strip of a longitude.
    public static func strip(lon: Double) -> Int64 { Int64(((lon + 180) / stripDegrees).rounded(.down)) }

    /// The bounding box of the circle of `radius` metres around `origin`; every point within the circle (by
    /// `GeoPoint.distance`) is inside it, with a hair of slack for rounding.
    public init(around origin: GeoPoint, radius: Double) {
        let angle = radius / GeoPoint.earthRadius * 1.000_001 + 1e-12
        let dLat = angle * 180 / .pi
        latMin = max(-90, origin.lat - dLat)
        latMax = min(90, origin.lat + dLat)
        let c = cos(origin.lat * .pi / 180)
        let s = sin(min(angle, .pi / 2))
        guard latMin > -90, latMax < 90, c > 0, s < c else {
            lons = [(-180, 180)]
            return
        }
        let dLon = asin(s / c) * 180 / .pi
        let west = origin.lon - dLon
        let east = origin.lon + dLon
        if dLon >= 180 {
            lons = [(-180, 180)]
        } else if west < -180 {
            lons = [(west + 360, 180), (-180, east)]
        } else if east > 180 {
            lons = [(west, 180), (-180, east - 360)]
        } else {
            lons = [(west, east)]
        }
    }

    /// The strips to read, each with its longitude bounds: one seek per strip (`last` nil), or, when there would be
    /// too many (near the poles), one range of strips per longitude range.
    public var strips: [(first: Int64, last: Int64?, lonMin: Double, lonMax: Double)] {
        var seeks: [(Int64, Int64?, Double, Double)] = []
        var ranges: [(Int64, Int64?, Double, Double)] = []
        var total = 0
        for (west, east) in lons {
            let a = Self.strip(lon: west)
            let b = Self.strip(lon: east)
            ranges.append((a, b, west, east))
            total += Int(b - a) + 1
            if total <= Self.maxStripSeeks {
                for strip in a...b { seeks.append((strip, nil, west, east)) }
            }
        }
        return total <= Self.maxStripSeeks ? seeks : ranges
    }

    /// The longitude condition for SQL (`lon BETWEEN ? AND ?`, or two joined by OR), and its arguments.
    public var lonCondition: (String, [Double]) {
        (
            "(" + lons.map { _ in "lon BETWEEN ? AND ?" }.joined(separator: " OR ") + ")",
            lons.flatMap { [$0.0, $0.1] }
        )
    }
}

extension PictureCandidate {
    /// Creates the value from a stored row's coordinates (no place unless both are there and valid).
    public init(
        id: Int64, lat: Double?, lon: Double?, likes: Int64, createdAt: Int64, hidden: Bool, privateEvent: Int64?
    ) {
        self.init(
            id: id, point: lat.flatMap { la in lon.flatMap { GeoPoint(lat: la, lon: $0) } }, likes: likes,
            createdAt: createdAt, hidden: hidden, privateEvent: privateEvent)
    }
}

extension PictureRecord {
    /// Creates the value from a stored row's coordinates (no place unless both are there and valid).
    public init(
        id: Int64, by: User, caption: String?, event: EventRef?, lat: Double?, lon: Double?, likes: Int64,
        liked: Bool, createdAt: Int64, mediaID: String, hidden: Bool
    ) {
        self.init(
            id: id, by: by, caption: caption, event: event,
            point: lat.flatMap { la in lon.flatMap { GeoPoint(lat: la, lon: $0) } }, likes: likes, liked: liked,
            createdAt: createdAt, mediaID: mediaID, hidden: hidden)
    }
}
