// The in-memory index of every live position of one kind (users, trackers, ...), owned by the hub's event loop.
// Writes dominate (every client reports every few seconds), so an upsert is a handful of lookups and never a
// rebalance: a point lives in a fixed cell of a uniform grid (GridGeometry), a move within its cell rewrites its
// coordinates in place, and a move across cells is a swap-remove from the old cell plus an append to the new.
// Each id maps to a packed (cell, slot) pair so removal finds its entry without searching; the entry swapped into
// the hole gets its slot rewritten. The id lookup goes through Int64Map, whose one cache miss is most of what an
// upsert costs at a million points; the cell lookup goes through the RowDirectory that queries also use. Emptied
// cells go on a free list and are reused, so churn does not grow the cell array. Queries are in
// GridIndex+Radius.swift and GridIndex+Nearest.swift.
//
// Threading: a plain value type with no locks; one thread (the event loop) owns it.

public import CairnGeo

/// A uniform-grid index of points keyed by `Int64` id, answering radius and k-nearest queries by great-circle
/// distance (`GeoPoint.distance`). Not thread-safe: keep it on one thread.
public struct GridIndex {
    /// The accepted cell sizes in metres.
    public static let cellSizeRange: ClosedRange<Double> = 10...100_000

    /// How a query reads cells: walking the rows of its cover through the row directory, or scanning every
    /// occupied cell (cheaper when the cover spans so many rows that looking each up costs more).
    enum ScanPolicy {
        case automatic
        case cover
        case occupiedCells
    }

    let geometry: GridGeometry
    /// Cells by index; free ones have key `CellKey.vacant` and are listed in `freeCells`.
    var cells: [GridCell] = []
    /// Occupied cells by row and column.
    var directory = RowDirectory()
    var freeCells: [Int32] = []
    /// Where each id is: cell index in the high 32 bits, slot in that cell's entries in the low 32.
    var slots = Int64Map()
    /// How queries pick between the cover and a scan of all cells; only tests change it.
    var scanPolicy = ScanPolicy.automatic

    /// An empty index whose cells are about `cellSize` metres on a side (10 m to 100 km).
    ///
    /// Pick the size near the radius of typical queries: a radius query then reads a handful of cells.
    public init(cellSize: Double = 500) {
        precondition(Self.cellSizeRange.contains(cellSize), "cell size \(cellSize) m is outside 10 m ... 100 km")
        geometry = GridGeometry(cellSize: cellSize)
    }

    /// The nominal cell edge in metres.
    public var cellSize: Double { geometry.cellSize }

    /// Number of indexed points.
    public var count: Int { slots.count }

    /// True when no point is indexed.
    public var isEmpty: Bool { slots.count == 0 }

    /// Number of occupied cells.
    public var occupiedCellCount: Int { directory.cellCount }

    /// True when `id` is indexed.
    public func contains(_ id: Int64) -> Bool {
        slots[id] != nil
    }

    /// The indexed position of `id`, or nil.
    public func position(of id: Int64) -> GeoPoint? {
        guard let packed = slots[id] else { return nil }
        return cells[Self.cell(packed)].entries[Self.slot(packed)].point
    }

    /// Inserts `id` at `point`, or moves it there if it is already indexed. O(1), plus a shift of one row's list of
    /// occupied columns when the point enters an empty cell or leaves its cell empty.
    public mutating func upsert(_ id: Int64, at point: GeoPoint) {
        let key = geometry.key(for: point)
        guard let packed = slots[id] else {
            slots.set(id, attach(GridEntry(id: id, point: point), key: key))
            return
        }
        let cell = Self.cell(packed)
        let slot = Self.slot(packed)
        if cells[cell].key == key {
            cells[cell].entries[slot].point = point
            return
        }
        detach(cell: cell, slot: slot)
        slots.set(id, attach(GridEntry(id: id, point: point), key: key))
    }

    /// Removes `id`; returns false when it was not indexed. O(1), plus a row-list shift if its cell empties.
    @discardableResult
    public mutating func remove(_ id: Int64) -> Bool {
        guard let packed = slots.removeValue(forKey: id) else { return false }
        detach(cell: Self.cell(packed), slot: Self.slot(packed))
        return true
    }

    /// Makes room for `count` points without growing the id table.
    public mutating func reserveCapacity(_ count: Int) {
        slots.reserveCapacity(count)
    }

    /// Removes every point, keeping no storage.
    public mutating func removeAll() {
        cells = []
        directory = RowDirectory()
        freeCells = []
        slots = Int64Map()
    }

    // MARK: - Bookkeeping

    @inline(__always)
    static func cell(_ packed: UInt64) -> Int { Int(packed >> 32) }

    @inline(__always)
    static func slot(_ packed: UInt64) -> Int { Int(packed & 0xFFFF_FFFF) }

    @inline(__always)
    static func pack(cell: Int, slot: Int) -> UInt64 { UInt64(cell) << 32 | UInt64(slot) }

    /// Appends `entry` to the cell with `key`, taking a free cell or a new one if it is not occupied; returns the
    /// packed location.
    private mutating func attach(_ entry: GridEntry, key: Int64) -> UInt64 {
        let row = CellKey.row(key)
        let column = CellKey.column(key)
        let cell: Int
        if let existing = directory.cell(row: row, column: column) {
            cell = existing
        } else if let free = freeCells.popLast() {
            cell = Int(free)
            cells[cell].key = key
            directory.insert(row: row, column: column, cell: cell)
        } else {
            cell = cells.count
            precondition(cell < Int(Int32.max), "too many cells")
            cells.append(GridCell(key: key))
            directory.insert(row: row, column: column, cell: cell)
        }
        let slot = cells[cell].entries.count
        cells[cell].entries.append(entry)
        return Self.pack(cell: cell, slot: slot)
    }

    /// Removes the entry at (`cell`, `slot`) by moving the cell's last entry into its place, and frees the cell if
    /// it is left empty. The caller owns the removed id's slot record.
    private mutating func detach(cell: Int, slot: Int) {
        let last = cells[cell].entries.count - 1
        if slot != last {
            let moved = cells[cell].entries[last]
            cells[cell].entries[slot] = moved
            slots.set(moved.id, Self.pack(cell: cell, slot: slot))
        }
        cells[cell].entries.removeLast()
        if cells[cell].entries.isEmpty {
            let key = cells[cell].key
            directory.remove(row: CellKey.row(key), column: CellKey.column(key))
            cells[cell].key = CellKey.vacant
            if cells[cell].entries.capacity > GridCell.retainedCapacity { cells[cell].entries = [] }
            freeCells.append(Int32(cell))
        }
    }
}
