// The cover of a cap must contain the cell of every point whose computed distance is within the radius, and the
// per-point bounds must let it through: probed with points placed just inside and just outside caps of every size,
// centred anywhere including the poles and the antimeridian. Column runs wrap, subtract and grow monotonically.

import CairnGeo
import Testing

@testable import CairnSpatial

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite(.timeLimit(.minutes(5)))
struct SphericalCapTests {
    /// Checks that every point within `radius` of `center` (by GeoPoint.distance) passes every stage of the cover.
    private func expectCovered(_ point: GeoPoint, center: GeoPoint, radius: Double, grid: GridGeometry) {
        guard center.distance(to: point) <= radius else { return }
        let cap = SphericalCap(center: center, radius: radius, geometry: grid)
        let row = grid.row(lat: point.lat)
        let context = "centre \(center.lat),\(center.lon) r \(radius) point \(point.lat),\(point.lon)"
        #expect(row >= cap.firstRow && row <= cap.lastRow, "row outside cover: \(context)")
        #expect(abs(point.lat - center.lat) <= cap.deltaDegrees, "latitude bound: \(context)")
        var apart = abs(point.lon - center.lon)
        if apart > 180 { apart = 360 - apart }
        let overall = cap.overallHalfWidth()
        #expect(overall >= 180 || apart <= overall, "overall longitude bound: \(context)")
        let width = cap.halfWidth(row: row, geometry: grid)
        #expect(width >= 180 || apart <= width, "row longitude bound \(width): \(context)")
        let columns = grid.columnCount(row: row)
        let run = ColumnRun(around: center.lon, halfWidth: width, columns: columns, geometry: grid)
        #expect(
            run.contains(grid.column(lon: point.lon, columns: columns), columns: columns),
            "column outside cover: \(context)")
    }

    @Test(arguments: [10.0, 500, 5_000, 100_000])
    func coverHoldsEveryPointAtTheEdgeOfTheCap(_ cellSize: Double) {
        let grid = GridGeometry(cellSize: cellSize)
        var rng = SeededGenerator(seed: UInt64(cellSize))
        let anchors = SampleGeography.mixedPoints(count: 200, using: &rng)
        for _ in 0..<4_000 {
            let center = SampleGeography.center(among: anchors, using: &rng)
            let radius = exp(Double.random(in: 0...log(2.1e7), using: &rng))
            for _ in 0..<6 {
                // Just inside, exactly at, and just outside the edge, along a random bearing.
                let scale = [0.999_999, 1, 1.000_001, Double.random(in: 0.9...1, using: &rng)].randomElement(
                    using: &rng)!
                let point = SampleGeography.destination(
                    from: center, bearing: Double.random(in: 0..<(2 * .pi), using: &rng),
                    distance: radius * scale)
                expectCovered(point, center: center, radius: radius, grid: grid)
                // The same point used as the radius: on the boundary by construction.
                expectCovered(point, center: center, radius: center.distance(to: point), grid: grid)
            }
        }
    }

    @Test func capsThroughAPoleCoverEveryLongitude() {
        let grid = GridGeometry(cellSize: 500)
        let cap = SphericalCap(center: GeoPoint(lat: 89.99, lon: 10)!, radius: 5_000, geometry: grid)
        #expect(cap.lastRow == grid.rowCount - 1)
        #expect(cap.halfWidth(row: grid.rowCount - 1, geometry: grid) >= 180)
        #expect(cap.spansAllLongitudes)
    }

    @Test func aSmallCapAwayFromThePolesHasANarrowCover() {
        let grid = GridGeometry(cellSize: 500)
        let cap = SphericalCap(center: GeoPoint(lat: 45, lon: 0)!, radius: 200, geometry: grid)
        #expect(cap.lastRow - cap.firstRow <= 1)
        let width = cap.halfWidth(row: grid.row(lat: 45), geometry: grid)
        #expect(width > 0 && width < 0.01)
    }

    @Test func wholeSphereFromHalfTheCircumference() {
        let grid = GridGeometry(cellSize: 500)
        let cap = SphericalCap(
            center: GeoPoint(lat: 12, lon: 34)!, radius: SampleGeography.halfCircumference,
            geometry: grid)
        #expect(cap.wholeSphere)
        #expect(cap.firstRow == 0 && cap.lastRow == grid.rowCount - 1)
        #expect(SphericalCap(center: GeoPoint(lat: 0, lon: 0)!, radius: .infinity, geometry: grid).wholeSphere)
    }

    @Test func runsWrapAcrossTheAntimeridian() {
        let grid = GridGeometry(cellSize: 500)
        let run = ColumnRun(around: 179.99, halfWidth: 0.02, columns: 360, geometry: grid)
        #expect(run.contains(359, columns: 360))
        #expect(run.contains(0, columns: 360))
        #expect(!run.contains(1, columns: 360))
        #expect(!run.contains(358, columns: 360))
        let west = ColumnRun(around: -180, halfWidth: 0.5, columns: 360, geometry: grid)
        #expect(west.contains(359, columns: 360) && west.contains(0, columns: 360))
    }

    @Test func runsGrowMonotonicallyAndSubtractExactly() {
        let grid = GridGeometry(cellSize: 500)
        var rng = SeededGenerator(seed: 9)
        for _ in 0..<3_000 {
            let columns = [1, 2, 3, 7, 64, 361].randomElement(using: &rng)!
            let lon = [Double.random(in: -180...180, using: &rng), 180, -180, 179.9, -179.9].randomElement(using: &rng)!
            let narrow = Double.random(in: -1...190, using: &rng)
            let wide = max(narrow, Double.random(in: -1...190, using: &rng))
            let inner = ColumnRun(around: lon, halfWidth: narrow, columns: columns, geometry: grid)
            let outer = ColumnRun(around: lon, halfWidth: wide, columns: columns, geometry: grid)
            #expect(inner.count <= columns && outer.count <= columns)
            let (a, b) = outer.subtracting(inner, columns: columns)
            var seen = [Int](repeating: 0, count: columns)
            a.forEach(columns: columns) { seen[$0] += 1 }
            b.forEach(columns: columns) { seen[$0] += 1 }
            for column in 0..<columns {
                let inInner = inner.contains(column, columns: columns)
                let inOuter = outer.contains(column, columns: columns)
                #expect(!inInner || inOuter, "run not monotone: lon \(lon) \(narrow) → \(wide), \(columns) columns")
                #expect(seen[column] == (inOuter && !inInner ? 1 : 0), "difference wrong at column \(column)")
            }
        }
    }
}
