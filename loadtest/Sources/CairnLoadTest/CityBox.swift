// The rectangle simulated users move in. Movement is computed in metres on a local flat projection (a city is
// small enough that the error is negligible) and turned back into degrees only when a position is reported.
import Foundation

/// A latitude/longitude box, south-west to north-east.
public struct CityBox: Sendable, Equatable, Codable {
    /// Southern edge, degrees.
    public var minLat: Double
    /// Western edge, degrees.
    public var minLon: Double
    /// Northern edge, degrees.
    public var maxLat: Double
    /// Eastern edge, degrees.
    public var maxLon: Double

    /// Central Paris, about 12 km × 13 km.
    public static let paris = CityBox(minLat: 48.815, minLon: 2.25, maxLat: 48.905, maxLon: 2.42)

    /// Creates a box; the edges must be ordered and inside the valid ranges.
    public init(minLat: Double, minLon: Double, maxLat: Double, maxLon: Double) {
        self.minLat = minLat
        self.minLon = minLon
        self.maxLat = maxLat
        self.maxLon = maxLon
    }

    /// Parses `minLat,minLon,maxLat,maxLon`; nil when malformed, out of range or empty.
    public init?(parsing text: String) {
        let parts = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count == 4, let a = parts[0], let b = parts[1], let c = parts[2], let d = parts[3],
            a < c, b < d, a >= -85, c <= 85, b >= -180, d <= 180
        else { return nil }
        self.init(minLat: a, minLon: b, maxLat: c, maxLon: d)
    }

    /// Metres per degree of latitude (mean Earth radius 6,371 km).
    static let metresPerDegree = 6_371_000.0 * Double.pi / 180

    /// Width in metres, measured at the box's middle latitude.
    public var widthMetres: Double { (maxLon - minLon) * Self.metresPerDegree * cosMid }
    /// Height in metres.
    public var heightMetres: Double { (maxLat - minLat) * Self.metresPerDegree }

    private var cosMid: Double { cos((minLat + maxLat) / 2 * Double.pi / 180) }

    /// The coordinate of a point `x` metres east and `y` metres north of the south-west corner.
    public func coordinate(x: Double, y: Double) -> (lat: Double, lon: Double) {
        (minLat + y / Self.metresPerDegree, minLon + x / (Self.metresPerDegree * cosMid))
    }

    /// Whether the coordinate lies inside the box (edges included).
    public func contains(lat: Double, lon: Double) -> Bool {
        lat >= minLat && lat <= maxLat && lon >= minLon && lon <= maxLon
    }
}
