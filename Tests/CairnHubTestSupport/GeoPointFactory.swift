// Points for tests whose targets do not import CairnGeo themselves.
public import CairnGeo

/// Makes points.
public enum GeoPointFactory {
    /// The point at `lat`, `lon`, or nil when out of range.
    public static func point(_ lat: Double, _ lon: Double) -> GeoPoint? { GeoPoint(lat: lat, lon: lon) }
}
