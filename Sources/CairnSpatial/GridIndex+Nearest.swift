// k-nearest queries by expanding rings. Ring i is the cover (SphericalCap) of a radius ρᵢ; only its cells not in
// earlier rings are read, so no cell is read twice. Because a cover holds every point whose computed distance is
// ≤ its radius, once ring i is read every unread point is farther than ρᵢ: that is the lower bound on any
// unvisited cell, true near the poles and across the antimeridian because the cover is. The search stops as soon
// as it holds k candidates and the k-th is within ρᵢ. The radius starts where k points would be at the index's
// mean density over its occupied cells, doubles while fewer than k candidates are known, and once k are known
// jumps straight to the k-th distance, so one more ring finishes.
//
// "Not in earlier rings" must be exact, or a cell would be read twice and its points counted twice. Each row keeps
// the widest longitude half-width of any ring so far, and a ring reads the columns of its (never narrower)
// width minus those of the previous one: column runs are monotone in width, so the difference is well defined.
// Candidates are offered from every point read, whatever the ring; once k are held, a point further in latitude
// than the k-th distance is skipped without computing its distance.
//
// When a ring's cover has too many rows to be worth walking (see GridIndex.scansOccupiedCells), the search starts
// over and reads every occupied cell in reach of the maximum radius once instead.

public import CairnGeo

extension GridIndex {
    /// The `k` points nearest to `center` within `maxRadius` metres, nearest first, ties broken by smaller id.
    /// Returns fewer when fewer are in reach; none when `k` ≤ 0 or `maxRadius` is negative or NaN.
    public func nearest(_ k: Int, to center: GeoPoint, within maxRadius: Double = .infinity)
        -> [(id: Int64, distance: Double)]
    {
        guard k > 0, maxRadius >= 0, !isEmpty else { return [] }
        var search = NearestSearch(center: center, limit: maxRadius, capacity: min(k, slots.count))
        // First guess: the radius holding k points at the index's mean density over its occupied cells.
        let cellsPerPoint = Double(directory.cellCount) / Double(slots.count)
        var radius = min(maxRadius, geometry.cellSize * (Double(k) * cellsPerPoint / .pi).squareRoot())
        // Widest half-width read so far in each row from `readFirst` to `readLast` (negative: none).
        var readWidths: [Double] = []
        var widths: [Double] = []
        var readFirst = 0
        var readLast = -1
        while true {
            let cap = SphericalCap(center: center, radius: radius, geometry: geometry)
            if scansOccupiedCells(for: cap) {
                search.restart()
                let reach = SphericalCap(center: center, radius: maxRadius, geometry: geometry)
                for cell in cells.indices {
                    let key = cells[cell].key
                    if key == CellKey.vacant { continue }
                    let row = CellKey.row(key)
                    if row < reach.firstRow || row > reach.lastRow { continue }
                    cells[cell].entries.withUnsafeBufferPointer { search.consider($0) }
                }
                break
            }
            let first = readLast < readFirst ? cap.firstRow : min(cap.firstRow, readFirst)
            let last = max(cap.lastRow, readLast)
            widths.removeAll(keepingCapacity: true)
            for row in first...last {
                let before = row >= readFirst && row <= readLast ? readWidths[row - readFirst] : -1
                let now = row >= cap.firstRow && row <= cap.lastRow ? cap.halfWidth(row: row, geometry: geometry) : -1
                let width = max(now, before)
                widths.append(width)
                if width < 0 || width == before { continue }
                let columns = geometry.columnCount(row: row)
                let outer = ColumnRun(around: center.lon, halfWidth: width, columns: columns, geometry: geometry)
                let inner = ColumnRun(around: center.lon, halfWidth: before, columns: columns, geometry: geometry)
                let (west, east) = outer.subtracting(inner, columns: columns)
                for run in 0..<2 {
                    directory.forEachCell(row: row, in: run == 0 ? west : east, columns: columns) { cell in
                        cells[cell].entries.withUnsafeBufferPointer { search.consider($0) }
                    }
                }
            }
            swap(&readWidths, &widths)
            readFirst = first
            readLast = last
            if cap.wholeSphere || radius >= maxRadius { break }
            if search.best.isFull && search.best.worstDistance <= radius { break }
            radius = min(maxRadius, search.best.isFull ? search.best.worstDistance : radius * 2)
        }
        return search.best.takeSorted()
    }
}

/// The state of one nearest-neighbour search: the best candidates and the latitude reach beyond which a point
/// cannot displace the worst of them.
private struct NearestSearch {
    let center: GeoPoint
    let limit: Double
    var best: NearestHeap
    /// Degrees of latitude beyond which a point is certainly farther than the worst candidate (infinite until
    /// the heap is full).
    var latitudeReach = Double.infinity

    init(center: GeoPoint, limit: Double, capacity: Int) {
        self.center = center
        self.limit = limit
        best = NearestHeap(capacity: capacity)
    }

    mutating func restart() {
        best.removeAll()
        latitudeReach = .infinity
    }

    @inline(__always)
    mutating func consider(_ entries: UnsafeBufferPointer<GridEntry>) {
        for entry in entries {
            let point = entry.point
            if abs(point.lat - center.lat) > latitudeReach { continue }
            let distance = center.distance(to: point)
            if distance > limit { continue }
            best.offer(Neighbor(id: entry.id, distance: distance))
            if best.isFull {
                let worst = best.worstDistance
                let grown = worst + worst * 1e-9 + SphericalCap.radiusSlack
                latitudeReach = grown / GeoPoint.earthRadius * 180 / .pi
            }
        }
    }
}
