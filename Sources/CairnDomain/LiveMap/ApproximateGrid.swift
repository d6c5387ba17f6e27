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

    /// The centre of the cell containing (lat, lon).
    public func snap(lat: Double, lon: Double) -> (lat: Double, lon: Double) {
        let row = min(rows - 1, max(0, Int(((lat + 90) / rowHeight).rounded(.down))))
        let centreLat = -90 + (Double(row) + 0.5) * rowHeight
        let circumference = 2 * Double.pi * 6_371_008.8 * cos(centreLat * .pi / 180)
        let columns = max(1, Int((circumference / cellSize).rounded(.down)))
        let width = 360 / Double(columns)
        let column = min(columns - 1, max(0, Int(((lon + 180) / width).rounded(.down))))
        let centreLon = -180 + (Double(column) + 0.5) * width
        return (Self.round(centreLat), Self.round(centreLon))
    }

    /// Six decimals (~0.1 m): enough to name a cell centre, and stable across platforms.
    private static func round(_ v: Double) -> Double { (v * 1e6).rounded() / 1e6 }
}
