// Radius queries: walk the cells of the cap's cover (SphericalCap), and in each cell reject points by cheap
// latitude and longitude bounds before computing the one exact haversine distance that decides. The distance is
// always `center.distance(to: point)`, so a caller comparing against GeoPoint.distance sees the same numbers.
// The cover is walked row by row through the RowDirectory, so only occupied cells are read. When the cover has
// so many rows that looking each up would cost more than reading every occupied cell (a radius of thousands of
// kilometres on small cells), the occupied cells are scanned instead: the cost of a query is bounded by the
// index, never by the area of the Earth. Nothing here allocates.

public import CairnGeo

extension GridIndex {
    /// Calls `body` with the id, position and distance in metres of every point whose great-circle distance from
    /// `center` is at most `radius`, in no particular order. A negative or NaN radius visits nothing; an infinite
    /// one (or anything past half the Earth's circumference) visits everything. Allocates nothing; `body` must
    /// not modify the index.
    public func forEach(within radius: Double, of center: GeoPoint, _ body: (Int64, GeoPoint, Double) -> Void) {
        guard radius >= 0, !isEmpty else { return }
        let cap = SphericalCap(center: center, radius: radius, geometry: geometry)
        if scansOccupiedCells(for: cap) {
            scanOccupiedCells(cap: cap, limit: radius, body)
        } else {
            walkCover(of: cap) { cell, halfWidth in
                scanCell(cell, cap: cap, halfWidth: halfWidth, limit: radius, body)
            }
        }
    }

    /// The ids and distances in metres of every point within `radius` metres of `center`, in no particular order.
    public func query(within radius: Double, of center: GeoPoint) -> [(id: Int64, distance: Double)] {
        var found: [(id: Int64, distance: Double)] = []
        forEach(within: radius, of: center) { id, _, distance in found.append((id, distance)) }
        return found
    }

    // MARK: - Shared by radius and nearest queries

    /// Occupied cells that a sequential scan reads in the time one row of a cover costs (a hash probe and a binary
    /// search, mostly cache misses, against a read of the next cell in the array); measured roughly, and only a
    /// crossover point: both ways give the same answer.
    static let rowCostInCells = 32

    /// True when `cap` should be answered by scanning every occupied cell rather than walking its cover.
    func scansOccupiedCells(for cap: SphericalCap) -> Bool {
        switch scanPolicy {
        case .automatic: (cap.lastRow - cap.firstRow + 1) * Self.rowCostInCells > directory.cellCount
        case .cover: false
        case .occupiedCells: true
        }
    }

    /// Calls `visit` with the index in `cells` and the row's longitude half-width for each occupied cell of the
    /// cap's cover.
    @inline(__always)
    func walkCover(of cap: SphericalCap, _ visit: (Int, Double) -> Void) {
        for row in cap.firstRow...cap.lastRow {
            let halfWidth = cap.halfWidth(row: row, geometry: geometry)
            if halfWidth < 0 { continue }
            let columns = geometry.columnCount(row: row)
            let run = ColumnRun(around: cap.center.lon, halfWidth: halfWidth, columns: columns, geometry: geometry)
            directory.forEachCell(row: row, in: run, columns: columns) { cell in visit(cell, halfWidth) }
        }
    }

    /// Calls `body` for each point of every occupied cell in the cap's rows whose distance is at most `limit`.
    func scanOccupiedCells(cap: SphericalCap, limit: Double, _ body: (Int64, GeoPoint, Double) -> Void) {
        let halfWidth = cap.overallHalfWidth()
        for cell in cells.indices {
            let key = cells[cell].key
            if key == CellKey.vacant { continue }
            let row = CellKey.row(key)
            if row < cap.firstRow || row > cap.lastRow { continue }
            scanCell(cell, cap: cap, halfWidth: halfWidth, limit: limit, body)
        }
    }

    /// Calls `body` for each point of `cell` within `limit` metres of the cap's centre. Points further than the
    /// cap's angular radius in latitude, or than `halfWidth` degrees in longitude (≥ 180: no bound), are
    /// rejected without computing a distance.
    @inline(__always)
    func scanCell(
        _ cell: Int, cap: SphericalCap, halfWidth: Double, limit: Double,
        _ body: (Int64, GeoPoint, Double) -> Void
    ) {
        let center = cap.center
        let latReach = cap.deltaDegrees
        let checksLongitude = halfWidth < 180
        cells[cell].entries.withUnsafeBufferPointer { entries in
            for entry in entries {
                let point = entry.point
                if abs(point.lat - center.lat) > latReach { continue }
                if checksLongitude {
                    var apart = abs(point.lon - center.lon)
                    if apart > 180 { apart = 360 - apart }
                    if apart > halfWidth { continue }
                }
                let distance = center.distance(to: point)
                if distance <= limit { body(entry.id, point, distance) }
            }
        }
    }
}
