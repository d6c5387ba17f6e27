// The reverse of a radius query: which disks contain this point? A radius query asks "what is near me"; a relic
// asks the opposite, "whose circle am I standing in", and must answer it on every position update. Each disk is
// registered in every cell of its cover (the same SphericalCap cover radius queries walk, so the antimeridian and
// the poles are handled the same way), and a point then reads exactly one cell: the cost of a lookup is the number
// of disks whose cover includes the point's cell, not the number of disks, nor their radius. Inserting costs the
// size of the cover, so disks should be at most a few dozen cells across (a 5 km disk on 1 km cells is ~120 cells).
//
// Threading: a plain value owned by one thread, like GridIndex.

import CairnGeo

/// Disks (centre and radius) indexed by the grid cells they cover, answering "which disks contain this point".
public struct DiskCoverIndex {
    struct Disk {
        var center: GeoPoint
        var radius: Double
        var cells: [Int64]
    }

    let geometry: GridGeometry
    private var disks: [Int64: Disk] = [:]
    private var cells: [Int64: [Int64]] = [:]

    /// An empty index whose cells are about `cellSize` metres on a side (10 m to 100 km).
    public init(cellSize: Double = 1_000) {
        precondition(cellSize >= 10 && cellSize <= 100_000, "cell size must be between 10 m and 100 km")
        geometry = GridGeometry(cellSize: cellSize)
    }

    /// Disks indexed.
    public var count: Int { disks.count }

    /// Cells holding at least one disk (for memory estimates and tests).
    public var occupiedCells: Int { cells.count }

    /// True when `id` is indexed.
    public func contains(_ id: Int64) -> Bool { disks[id] != nil }

    /// Adds the disk `id`, or replaces it if present. `radius` is in metres, finite and ≥ 0.
    public mutating func insert(_ id: Int64, center: GeoPoint, radius: Double) {
        precondition(radius >= 0 && radius.isFinite, "a disk's radius must be finite and non-negative")
        remove(id)
        var covered: [Int64] = []
        let cap = SphericalCap(center: center, radius: radius, geometry: geometry)
        for row in cap.firstRow...cap.lastRow {
            let halfWidth = cap.halfWidth(row: row, geometry: geometry)
            if halfWidth < 0 { continue }
            let columns = geometry.columnCount(row: row)
            let run = ColumnRun(around: center.lon, halfWidth: halfWidth, columns: columns, geometry: geometry)
            run.forEach(columns: columns) { column in
                covered.append(CellKey.pack(row: row, column: column))
            }
        }
        for key in covered { cells[key, default: []].append(id) }
        disks[id] = Disk(center: center, radius: radius, cells: covered)
    }

    /// Removes the disk `id`; false when it was not indexed.
    @discardableResult
    public mutating func remove(_ id: Int64) -> Bool {
        guard let disk = disks.removeValue(forKey: id) else { return false }
        for key in disk.cells {
            guard var ids = cells[key] else { continue }
            if let at = ids.firstIndex(of: id) { ids.swapAt(at, ids.count - 1); ids.removeLast() }
            cells[key] = ids.isEmpty ? nil : ids
        }
        return true
    }

    /// Calls `body` with the id of every disk containing `point` (distance from its centre ≤ its radius) and
    /// that distance in metres, in no particular order. Reads one cell; allocates nothing.
    public func forEach(containing point: GeoPoint, _ body: (Int64, Double) -> Void) {
        guard let ids = cells[geometry.key(for: point)] else { return }
        for id in ids {
            guard let disk = disks[id] else { continue }
            let distance = disk.center.distance(to: point)
            if distance <= disk.radius { body(id, distance) }
        }
    }

    /// The ids of every disk containing `point`, in no particular order.
    public func disks(containing point: GeoPoint) -> [Int64] {
        var found: [Int64] = []
        forEach(containing: point) { id, _ in found.append(id) }
        return found
    }
}
