// How the sphere is cut into cells. Rows are bands of equal latitude height (cellSize / metres-per-degree), so a
// point's row is one division; each row is cut into as many equal longitude columns as fit cellSize-wide at the
// row's middle latitude, so cells stay roughly square from the equator to the poles instead of shrinking to
// slivers (≥ 1 column per row; the rows at the poles have only a few cells meeting at the pole). The column
// count is a pure function of the row, recomputed on demand rather than tabulated: a 10 m grid has two million
// rows, and one cosine is cheaper than the cache misses of a table that size.
//
// Every function here is monotone in its input (a larger latitude never yields a smaller row, a larger
// longitude never a smaller column), which is what lets SphericalCap turn degree intervals into cell intervals
// without missing a point that sits exactly on an edge.

import CairnGeo

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The fixed layout of one grid: row height, row count and per-row column counts.
struct GridGeometry: Sendable {
    /// Metres per degree of latitude (and of longitude at the equator) on the mean-radius sphere.
    static let metresPerDegree = GeoPoint.earthRadius * .pi / 180

    /// Nominal edge of a cell in metres.
    let cellSize: Double
    /// Height of every row in degrees of latitude.
    let rowHeight: Double
    /// Rows from the south pole (row 0) to the north pole (row `rowCount - 1`).
    let rowCount: Int

    init(cellSize: Double) {
        self.cellSize = cellSize
        rowHeight = cellSize / Self.metresPerDegree
        rowCount = Int((180 / rowHeight).rounded(.up))
    }

    /// The row holding latitude `lat` (degrees, within [-90, 90]); 90 falls in the last row.
    @inline(__always)
    func row(lat: Double) -> Int {
        min(rowCount - 1, Int((lat + 90) / rowHeight))
    }

    /// Southern edge of `row` in degrees.
    @inline(__always)
    func southEdge(row: Int) -> Double {
        -90 + Double(row) * rowHeight
    }

    /// Northern edge of `row` in degrees (the last row is cut at the pole).
    @inline(__always)
    func northEdge(row: Int) -> Double {
        min(90, -90 + Double(row + 1) * rowHeight)
    }

    /// Columns in `row`: as many cellSize-wide cells as fit around the parallel at the row's middle, at least one.
    @inline(__always)
    func columnCount(row: Int) -> Int {
        let middle = (southEdge(row: row) + northEdge(row: row)) / 2
        let circumference = 2 * .pi * GeoPoint.earthRadius * cos(middle * .pi / 180)
        return max(1, Int(circumference / cellSize))
    }

    /// The column holding longitude `lon` (degrees, within [-180, 180]) in a row of `columns` columns; 180 falls in
    /// the last column, -180 in the first.
    @inline(__always)
    func column(lon: Double, columns: Int) -> Int {
        min(columns - 1, Int((lon + 180) / 360 * Double(columns)))
    }

    /// The packed key of the cell holding `point`.
    @inline(__always)
    func key(for point: GeoPoint) -> Int64 {
        let row = row(lat: point.lat)
        return CellKey.pack(row: row, column: column(lon: point.lon, columns: columnCount(row: row)))
    }
}

/// A cell's row and column packed into one `Int64` (row in the high 32 bits), the key of the cell dictionary.
/// Valid keys are never negative, so -1 can mark a free cell.
enum CellKey {
    /// The key of a vacant cell slot.
    static let vacant: Int64 = -1

    @inline(__always)
    static func pack(row: Int, column: Int) -> Int64 {
        Int64(row) << 32 | Int64(column)
    }

    @inline(__always)
    static func row(_ key: Int64) -> Int {
        Int(key >> 32)
    }

    @inline(__always)
    static func column(_ key: Int64) -> Int {
        Int(key & 0xFFFF_FFFF)
    }
}
