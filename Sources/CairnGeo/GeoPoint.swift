// A WGS84 position and the great-circle distance between two of them. Everything spatial in Cairn (positions,
// relic radii, nearest places) measures with this, on a sphere of the mean Earth radius: at the scales Cairn
// cares about (metres to tens of kilometres) the error against the ellipsoid is under 0.5 %, and haversine stays
// accurate for small distances where the spherical law of cosines loses precision.
#if canImport(Glibc)
public import Glibc
#endif

/// A latitude/longitude pair in degrees.
public struct GeoPoint: Sendable, Equatable, Hashable {
    /// Latitude in degrees, in [-90, 90].
    public let lat: Double
    /// Longitude in degrees, in [-180, 180].
    public let lon: Double

    /// Mean Earth radius in metres (IUGG).
    public static let earthRadius = 6_371_008.8

    /// Creates a point, or nil when a coordinate is not finite or out of range.
    public init?(lat: Double, lon: Double) {
        guard lat.isFinite, lon.isFinite, (-90...90).contains(lat), (-180...180).contains(lon) else { return nil }
        self.lat = lat
        self.lon = lon
    }

    /// The great-circle distance to `other` in metres (haversine).
    public func distance(to other: GeoPoint) -> Double {
        let φ1 = lat * .pi / 180
        let φ2 = other.lat * .pi / 180
        return Self.haversine(φ1: φ1, cosφ1: cos(φ1), lon1: lon, φ2: φ2, cosφ2: cos(φ2), lon2: other.lon)
    }

    /// The haversine distance in metres from its parts: latitudes in radians (`lat * .pi / 180`) with their
    /// cosines, longitudes in degrees. `distance(to:)` is this, so an index that keeps the parts of its points
    /// precomputed measures bit for bit what `distance(to:)` measures.
    @inlinable
    public static func haversine(
        φ1: Double, cosφ1: Double, lon1: Double, φ2: Double, cosφ2: Double, lon2: Double
    ) -> Double {
        let dφ = φ2 - φ1
        let dλ = (lon2 - lon1) * .pi / 180
        let s = sin(dφ / 2)
        let t = sin(dλ / 2)
        let h = min(1, s * s + cosφ1 * cosφ2 * t * t)
        return 2 * earthRadius * asin(h.squareRoot())
    }
}
