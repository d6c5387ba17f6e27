// The approximate grid of the live map: every point of a cell snaps to one centre nearby, at the poles and the
// antimeridian too.
import CairnGeo
import CairnLiveMap
import Testing

@Suite(.timeLimit(.minutes(5)))
struct ApproximateGridTests {
    @Test func snapsEveryPointOfACellToOneCentreNearby() throws {
        let grid = ApproximateGrid()
        let a = grid.snap(lat: 51.5007, lon: -0.1246)
        var same = 0
        for i in 0..<100 {
            let p = grid.snap(lat: 51.5007 + Double(i % 10) * 0.00005, lon: -0.1246 + Double(i / 10) * 0.00005)
            if p == a { same += 1 }
            let d = try #require(GeoPoint(lat: p.lat, lon: p.lon)).distance(
                to: try #require(GeoPoint(lat: 51.5007, lon: -0.1246)))
            #expect(d < 1_600)
        }
        #expect(same > 50)
    }

    @Test func worksAtThePolesAndTheAntimeridian() {
        let grid = ApproximateGrid()
        for (lat, lon) in [(90.0, 0.0), (-90.0, 180.0), (0.0, 180.0), (0.0, -180.0), (89.999, 179.999)] {
            let p = grid.snap(lat: lat, lon: lon)
            #expect((-90...90).contains(p.lat) && (-180...180).contains(p.lon))
        }
    }
}
