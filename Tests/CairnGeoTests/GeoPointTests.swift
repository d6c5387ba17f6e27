// Coordinate validation and great-circle distances against known values, across the antimeridian and at the poles.
import CairnGeo
import Testing

@Suite(.timeLimit(.minutes(5)))
struct GeoPointTests {
    @Test(arguments: [
        (91.0, 0.0), (-90.0001, 0.0), (0.0, 180.5), (0.0, -181.0), (Double.nan, 0.0),
        (0.0, Double.infinity),
    ])
    func outOfRangeOrNonFiniteCoordinatesAreRejected(_ lat: Double, _ lon: Double) {
        #expect(GeoPoint(lat: lat, lon: lon) == nil)
    }

    @Test func boundaryCoordinatesAreAccepted() {
        #expect(GeoPoint(lat: 90, lon: 180) != nil)
        #expect(GeoPoint(lat: -90, lon: -180) != nil)
    }

    @Test func parisToLondon() throws {
        let paris = try #require(GeoPoint(lat: 48.8566, lon: 2.3522))
        let london = try #require(GeoPoint(lat: 51.5074, lon: -0.1278))
        let d = paris.distance(to: london)
        #expect(abs(d - 343_500) < 1_500, "got \(d)")
    }

    @Test func oneDegreeOfLatitudeIsAbout111km() throws {
        let a = try #require(GeoPoint(lat: 10, lon: 20))
        let b = try #require(GeoPoint(lat: 11, lon: 20))
        #expect(abs(a.distance(to: b) - 111_195) < 10)
    }

    @Test func acrossTheAntimeridianIsShort() throws {
        let west = try #require(GeoPoint(lat: 0, lon: 179.999))
        let east = try #require(GeoPoint(lat: 0, lon: -179.999))
        #expect(abs(west.distance(to: east) - 222.4) < 0.5)
    }

    @Test func allLongitudesMeetAtThePole() throws {
        let a = try #require(GeoPoint(lat: 90, lon: 0))
        let b = try #require(GeoPoint(lat: 90, lon: 137))
        #expect(a.distance(to: b) < 1e-6)
    }

    @Test func smallDistancesKeepPrecision() throws {
        let a = try #require(GeoPoint(lat: 37.7749295, lon: -122.4194155))
        let b = try #require(GeoPoint(lat: 37.7749295 + 1e-5, lon: -122.4194155))
        #expect(abs(a.distance(to: b) - 1.11195) < 1e-3)
        #expect(a.distance(to: a) == 0)
    }

    @Test func distanceIsSymmetric() throws {
        let a = try #require(GeoPoint(lat: -33.86, lon: 151.21))
        let b = try #require(GeoPoint(lat: 40.71, lon: -74.0))
        #expect(abs(a.distance(to: b) - b.distance(to: a)) < 1e-6)
        #expect(abs(a.distance(to: b) - 15_990_000) < 30_000)
    }
}
