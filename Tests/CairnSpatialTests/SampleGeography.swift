// Point sets that stress a spherical grid: area-uniform points, tight clusters straddling the antimeridian and
// around both poles, exact boundary coordinates (±90, ±180), and points placed at a chosen distance and bearing
// from a centre, so caps can be probed right at their edge.

import CairnGeo

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum SampleGeography {
    static let halfCircumference = Double.pi * GeoPoint.earthRadius

    /// A point that must be valid.
    static func point(_ lat: Double, _ lon: Double) -> GeoPoint {
        guard let point = GeoPoint(lat: lat, lon: lon) else { preconditionFailure("bad sample \(lat), \(lon)") }
        return point
    }

    /// Uniform over the sphere's area.
    static func uniform(using rng: inout SeededGenerator) -> GeoPoint {
        let lat = asin(Double.random(in: -1...1, using: &rng)) * 180 / .pi
        return point(lat, Double.random(in: -180...180, using: &rng))
    }

    /// The point `distance` metres from `start` along initial `bearing` (radians from north).
    static func destination(from start: GeoPoint, bearing: Double, distance: Double) -> GeoPoint {
        let phi = start.lat * .pi / 180
        let lambda = start.lon * .pi / 180
        let d = distance / GeoPoint.earthRadius
        let sinLat = sin(phi) * cos(d) + cos(phi) * sin(d) * cos(bearing)
        let lat2 = asin(min(1, max(-1, sinLat)))
        let lon2 = lambda + atan2(sin(bearing) * sin(d) * cos(phi), cos(d) - sin(phi) * sin(lat2))
        var lonDegrees = lon2 * 180 / .pi
        while lonDegrees > 180 { lonDegrees -= 360 }
        while lonDegrees < -180 { lonDegrees += 360 }
        return point(min(90, max(-90, lat2 * 180 / .pi)), lonDegrees)
    }

    /// A point within `metres` of `center`, at a random bearing.
    static func near(_ center: GeoPoint, within metres: Double, using rng: inout SeededGenerator) -> GeoPoint {
        destination(
            from: center, bearing: Double.random(in: 0..<(2 * .pi), using: &rng),
            distance: Double.random(in: 0...metres, using: &rng))
    }

    /// Cluster centres: ordinary cities, and the awkward places.
    static let hubs: [GeoPoint] = [
        point(48.8566, 2.3522), point(-33.87, 151.21), point(65.0, 179.995), point(-16.5, -179.99),
        point(89.97, 40), point(-89.95, -100), point(0, 180), point(0, -180), point(0.001, 0),
    ]

    /// `count` points mixing every awkward case.
    static func mixedPoints(count: Int, using rng: inout SeededGenerator) -> [GeoPoint] {
        (0..<count).map { _ in
            switch Int.random(in: 0..<10, using: &rng) {
            case 0, 1:
                return uniform(using: &rng)
            case 2:  // straddling the antimeridian
                let side: Double = Bool.random(using: &rng) ? 1 : -1
                return point(
                    Double.random(in: -85...85, using: &rng),
                    side * (180 - Double.random(in: 0...0.05, using: &rng)))
            case 3:  // around the north pole, all longitudes
                return point(90 - Double.random(in: 0...0.2, using: &rng), Double.random(in: -180...180, using: &rng))
            case 4:  // around the south pole
                return point(-90 + Double.random(in: 0...0.2, using: &rng), Double.random(in: -180...180, using: &rng))
            case 5:  // exact boundary values
                let lats: [Double] = [-90, 90, 0, Double.random(in: -90...90, using: &rng)]
                let lons: [Double] = [-180, 180, 0, Double.random(in: -180...180, using: &rng)]
                return point(lats.randomElement(using: &rng)!, lons.randomElement(using: &rng)!)
            default:  // dense clusters around the hubs, a few km across
                let hub = hubs.randomElement(using: &rng)!
                return near(hub, within: Double.random(in: 10...5_000, using: &rng), using: &rng)
            }
        }
    }

    /// A query centre: an indexed point, a pole, the antimeridian, near a hub, or anywhere.
    static func center(among points: [GeoPoint], using rng: inout SeededGenerator) -> GeoPoint {
        switch Int.random(in: 0..<8, using: &rng) {
        case 0: return points.randomElement(using: &rng)!
        case 1: return point(Bool.random(using: &rng) ? 90 : -90, Double.random(in: -180...180, using: &rng))
        case 2: return point(Double.random(in: -90...90, using: &rng), Bool.random(using: &rng) ? 180 : -180)
        case 3: return point(89.99, Double.random(in: -180...180, using: &rng))
        case 4: return point(Double.random(in: -60...60, using: &rng), 179.99)
        case 5, 6: return near(hubs.randomElement(using: &rng)!, within: 3_000, using: &rng)
        default: return uniform(using: &rng)
        }
    }

    /// A radius from 1 m to 20,000 km, log-uniform, sometimes exactly the distance to an indexed point (so the
    /// point lies on the boundary), sometimes zero or past half the circumference.
    static func radius(from center: GeoPoint, among points: [GeoPoint], using rng: inout SeededGenerator) -> Double {
        switch Int.random(in: 0..<12, using: &rng) {
        case 0, 1: return center.distance(to: points.randomElement(using: &rng)!)
        case 2: return 0
        case 3: return [halfCircumference, halfCircumference + 1, .infinity].randomElement(using: &rng)!
        default: return exp(Double.random(in: 0...log(2e7), using: &rng))
        }
    }
}
