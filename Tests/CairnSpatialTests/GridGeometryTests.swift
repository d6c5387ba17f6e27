// The grid's layout: rows cover pole to pole, cells stay about cellSize wide at every latitude, the edges of the
// coordinate ranges (±90, ±180) land in real cells, and keys round-trip.

import CairnGeo
import Testing

@testable import CairnSpatial

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite(.timeLimit(.minutes(5)))
struct GridGeometryTests {
    @Test(arguments: [10.0, 50, 500, 5_000, 100_000])
    func rowsSpanPoleToPole(_ cellSize: Double) {
        let grid = GridGeometry(cellSize: cellSize)
        #expect(grid.row(lat: -90) == 0)
        #expect(grid.row(lat: 90) == grid.rowCount - 1)
        #expect(grid.southEdge(row: 0) == -90)
        #expect(grid.northEdge(row: grid.rowCount - 1) == 90)
        #expect(grid.northEdge(row: grid.rowCount - 2) < 90)
    }

    @Test(arguments: [50.0, 500, 5_000])
    func cellsStayAboutCellSizeWide(_ cellSize: Double) {
        let grid = GridGeometry(cellSize: cellSize)
        let rowHeightMetres = grid.rowHeight * GridGeometry.metresPerDegree
        #expect(abs(rowHeightMetres - cellSize) < 1e-6 * cellSize)
        var rng = SeededGenerator(seed: 1)
        for _ in 0..<2_000 {
            let row = Int.random(in: 0..<grid.rowCount, using: &rng)
            let columns = grid.columnCount(row: row)
            #expect(columns >= 1)
            let middle = (grid.southEdge(row: row) + grid.northEdge(row: row)) / 2
            let parallel = 2 * .pi * GeoPoint.earthRadius * cos(middle * .pi / 180)
            let width = parallel / Double(columns)
            if columns > 1 {
                #expect(width >= cellSize && width < 2 * cellSize, "row \(row): \(columns) columns, \(width) m")
            } else {
                #expect(parallel < 2 * cellSize)
            }
        }
    }

    @Test func equatorHasTheCircumferenceInCells() {
        let grid = GridGeometry(cellSize: 500)
        let columns = grid.columnCount(row: grid.row(lat: 0))
        #expect(abs(Double(columns) - 2 * .pi * GeoPoint.earthRadius / 500) < 2)
    }

    @Test func longitudeEdgesFallInTheFirstAndLastColumns() {
        let grid = GridGeometry(cellSize: 500)
        for columns in [1, 2, 3, 80_000] {
            #expect(grid.column(lon: -180, columns: columns) == 0)
            #expect(grid.column(lon: 180, columns: columns) == columns - 1)
            #expect(grid.column(lon: 0, columns: columns) == columns / 2)
        }
    }

    @Test func rowsAndColumnsAreMonotone() {
        let grid = GridGeometry(cellSize: 50)
        var rng = SeededGenerator(seed: 2)
        let lats = (0..<5_000).map { _ in Double.random(in: -90...90, using: &rng) }.sorted()
        let rows = lats.map { grid.row(lat: $0) }
        #expect(rows == rows.sorted())
        let lons = (0..<5_000).map { _ in Double.random(in: -180...180, using: &rng) }.sorted()
        let columns = lons.map { grid.column(lon: $0, columns: 777) }
        #expect(columns == columns.sorted())
    }

    @Test func keysRoundTrip() {
        let key = CellKey.pack(row: 40_000, column: 80_063)
        #expect(CellKey.row(key) == 40_000)
        #expect(CellKey.column(key) == 80_063)
        #expect(key >= 0)
        #expect(CellKey.pack(row: 0, column: 0) != CellKey.vacant)
    }

    @Test func polesAndAntimeridianHaveCells() {
        let grid = GridGeometry(cellSize: 500)
        let north = GeoPoint(lat: 90, lon: 180)!
        let south = GeoPoint(lat: -90, lon: -180)!
        #expect(CellKey.row(grid.key(for: north)) == grid.rowCount - 1)
        #expect(CellKey.row(grid.key(for: south)) == 0)
        let east = GeoPoint(lat: 10, lon: 180)!
        let west = GeoPoint(lat: 10, lon: -180)!
        let columns = grid.columnCount(row: grid.row(lat: 10))
        #expect(CellKey.column(grid.key(for: east)) == columns - 1)
        #expect(CellKey.column(grid.key(for: west)) == 0)
    }
}
