// "Approximate" sharing shows the centre of a fixed cell of about 2 km instead of the position. The cells are a
// fixed partition of the globe (rows of equal latitude height, each row cut into columns about 2 km wide), so the
// same true position always yields the same answer: a viewer who collects many updates from a user standing still,
// or walking inside one cell, learns nothing more than the cell. Jittering around the truth would instead let
// repeated updates be averaged back to it.
#if canImport(Glibc)
import Glibc
#endif

/// Snaps positions to the centre of their ~2 km cell.
public struct ApproximateGrid: Sendable {
    /// Cell size in metres.
    public let cellSize: Double
    private let rows: Int
    private let rowHeight: Double

    /// Creates a grid with cells of about `cellSize` metres (default 2000).
    public init(cellSize: Double = 2000) {
        precondition(cellSize >= 100, "approximate cells must be at least 100 m")
        self.cellSize = cellSize
        // Whole rows from pole to pole, each as close to `cellSize` tall as a whole number allows.
        rows = max(1, Int((180 / (cellSize / 111_195.0)).rounded(.down)))
        rowHeight = 180 / Double(rows)
    }

    /// One cell: its row (south to north) and its column within the row (west to east). Eight bytes, so the live
    /// map can remember the cell each user was last shown in at little cost.
    public struct Cell: Sendable, Equatable {
        /// The row, from the south pole.
        public var row: Int32
        /// The column, from 180° west.
        public var column: Int32
    }

    /// The centre of the cell containing (lat, lon).
    public func snap(lat: Double, lon: Double) -> (lat: Double, lon: Double) { centre(of: cell(lat: lat, lon: lon)) }

    /// The cell containing (lat, lon).
    public func cell(lat: Double, lon: Double) -> Cell {
        let row = min(rows - 1, max(0, Int(((lat + 90) / rowHeight).rounded(.down))))
        let (columns, width) = columns(inRow: row)
        let column = min(columns - 1, max(0, Int(((lon + 180) / width).rounded(.down))))
        return Cell(row: Int32(row), column: Int32(column))
    }

    /// The centre of `cell`, to six decimals.
    public func centre(of cell: Cell) -> (lat: Double, lon: Double) {
        let width = columns(inRow: Int(cell.row)).width
        let lon = -180 + (Double(cell.column) + 0.5) * width
        return (Self.round(centreLatitude(ofRow: Int(cell.row))), Self.round(lon))
    }

    /// True when (lat, lon) lies more than `margin` metres beyond the edge of `cell` (north-south or east-west).
    public func isBeyond(_ cell: Cell, lat: Double, lon: Double, margin: Double) -> Bool {
        let centreLat = centreLatitude(ofRow: Int(cell.row))
        let width = columns(inRow: Int(cell.row)).width
        let centreLon = -180 + (Double(cell.column) + 0.5) * width
        let outLat = max(0, abs(lat - centreLat) - rowHeight / 2) * Self.metresPerDegree
        var apartLon = abs(lon - centreLon)
        if apartLon > 180 { apartLon = 360 - apartLon }  // across the antimeridian
        let outLon = max(0, apartLon - width / 2) * Self.metresPerDegree * cos(lat * .pi / 180)
        return outLat > margin || outLon > margin
    }

    private static let metresPerDegree = 111_195.0

    private func centreLatitude(ofRow row: Int) -> Double { -90 + (Double(row) + 0.5) * rowHeight }

    private func columns(inRow row: Int) -> (count: Int, width: Double) {
        let circumference = 2 * Double.pi * 6_371_008.8 * cos(centreLatitude(ofRow: row) * .pi / 180)
        let columns = max(1, Int((circumference / cellSize).rounded(.down)))
        return (columns, 360 / Double(columns))
    }

    /// Six decimals (~0.1 m): enough to name a cell centre, and stable across platforms.
    private static func round(_ v: Double) -> Double { (v * 1e6).rounded() / 1e6 }
}
