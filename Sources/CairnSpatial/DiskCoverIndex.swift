// The reverse of a radius query: which disks contain this point? A radius query asks "what is near me"; a relic
// asks the opposite, "whose circle am I standing in", and must answer it on every position update. Each disk is
// registered in every cell of its cover (the same SphericalCap cover radius queries walk, so the antimeridian and
// the poles are handled the same way), and a point then reads exactly one cell: the cost of a lookup is the number
// of disks whose cover includes the point's cell, not the number of disks, nor their radius. Inserting costs the
// size of the cover, so disks should be at most a few dozen cells across (a 5 km disk on 1 km cells is ~120 cells).
//
// Threading: a plain value owned by one thread, like GridIndex.

public import CairnGeo

/// Disks (centre and radius) indexed by the grid cells they cover, answering "which disks contain this point".
public struct DiskCoverIndex {
    struct Disk {
        var center: GeoPoint
        var radius: Double
        var cells: [Int64]
    }

    /// A disk as registered in a cell: everything a lookup needs, inline, so a point's candidates are read from one
    /// contiguous array without a second lookup per disk.
    struct Entry {
        var id: Int64
        var center: GeoPoint
        var radius: Double
        /// The disk's angular radius in degrees of latitude, slack included: a cheap reject before the distance.
        var latReach: Double
    }

    let geometry: GridGeometry
    private var disks: [Int64: Disk] = [:]
    private var cells: [Int64: [Entry]] = [:]

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
        let entry = Entry(id: id, center: center, radius: radius, latReach: cap.deltaDegrees)
        for key in covered { cells[key, default: []].append(entry) }
        disks[id] = Disk(center: center, radius: radius, cells: covered)
    }

    /// Removes the disk `id`; false when it was not indexed.
    @discardableResult
    public mutating func remove(_ id: Int64) -> Bool {
        guard let disk = disks.removeValue(forKey: id) else { return false }
        for key in disk.cells {
            guard var entries = cells.removeValue(forKey: key) else { continue }
            if let at = entries.firstIndex(where: { $0.id == id }) {
                entries.swapAt(at, entries.count - 1)
                entries.removeLast()
            }
            if !entries.isEmpty { cells[key] = entries }
        }
        return true
    }

    /// Calls `body` with the id of every disk containing `point` (distance from its centre ≤ its radius) and
    /// that distance in metres, in no particular order. Reads one cell; allocates nothing.
    public func forEach(containing point: GeoPoint, _ body: (Int64, Double) -> Void) {
        guard let entries = cells[geometry.key(for: point)] else { return }
        entries.withUnsafeBufferPointer { entries in
            for entry in entries {
                if abs(entry.center.lat - point.lat) > entry.latReach { continue }
                let distance = entry.center.distance(to: point)
                if distance <= entry.radius { body(entry.id, distance) }
            }
        }
    }

    /// The ids of every disk containing `point`, in no particular order.
    public func disks(containing point: GeoPoint) -> [Int64] {
        var found: [Int64] = []
        forEach(containing: point) { id, _ in found.append(id) }
        return found
    }
}
