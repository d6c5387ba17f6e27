// Which cells are occupied, organised by row: for every row holding points, its occupied columns in ascending
// order, each with its cell's index. A query's cover is a run of columns per row, so one hash lookup for the row
// and one binary search for the run's first column find exactly the occupied cells in the run, never touching
// the empty ones. A hash table keyed by cell would need one lookup per cell of the cover instead, and when
// points are sparse (a worldwide layer on 500 m cells has one point per cell and a 100 km query covers 150,000
// cells) those lookups are almost all misses and dominate the query. The cost moves to occupying or emptying a
// cell, which shifts the rest of the row's list: at most a few thousand 8-byte words, and it happens only when a
// point enters an empty cell or leaves one.

/// Occupied cells by row, each row's columns sorted.
struct RowDirectory {
    /// One occupied row: packed (column << 32 | cell index) in ascending column order.
    private struct Row {
        var row: Int
        var columns: [UInt64]
    }

    /// Row number → index in `rows`.
    private var rowIndex = Int64Map()
    private var rows: [Row] = []
    private var freeRows: [Int32] = []
    /// Number of occupied cells.
    private(set) var cellCount = 0

    /// Number of occupied rows.
    var rowCount: Int { rowIndex.count }

    /// Approximate bytes held (tables and lists at capacity, with array headers).
    var storageBytes: Int {
        var bytes = rowIndex.bucketCount * 16 + rows.capacity * MemoryLayout<Row>.stride + freeRows.capacity * 4
        for row in rows where row.columns.capacity > 0 { bytes += 32 + row.columns.capacity * 8 }
        return bytes
    }

    @inline(__always)
    private static func column(_ packed: UInt64) -> Int { Int(packed >> 32) }

    @inline(__always)
    private static func cell(_ packed: UInt64) -> Int { Int(packed & 0xFFFF_FFFF) }

    /// Index of the first entry whose column is ≥ `column`.
    @inline(__always)
    private static func lowerBound(_ columns: UnsafeBufferPointer<UInt64>, _ column: Int) -> Int {
        var low = 0
        var high = columns.count
        while low < high {
            let middle = (low + high) >> 1
            if Self.column(columns[middle]) < column { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The index of the occupied cell at (`row`, `column`), or nil.
    @inline(__always)
    func cell(row: Int, column: Int) -> Int? {
        guard let slot = rowIndex[Int64(row)] else { return nil }
        return rows[Int(slot)].columns.withUnsafeBufferPointer { columns in
            let at = Self.lowerBound(columns, column)
            return at < columns.count && Self.column(columns[at]) == column ? Self.cell(columns[at]) : nil
        }
    }

    /// Records that cell `cell` now occupies (`row`, `column`), which must not be occupied.
    mutating func insert(row: Int, column: Int, cell: Int) {
        let packed = UInt64(column) << 32 | UInt64(cell)
        if let slot = rowIndex[Int64(row)] {
            let at = rows[Int(slot)].columns.withUnsafeBufferPointer { Self.lowerBound($0, column) }
            rows[Int(slot)].columns.insert(packed, at: at)
        } else if let slot = freeRows.popLast() {
            rows[Int(slot)].row = row
            rows[Int(slot)].columns.append(packed)
            rowIndex.set(Int64(row), UInt64(slot))
        } else {
            rowIndex.set(Int64(row), UInt64(rows.count))
            rows.append(Row(row: row, columns: [packed]))
        }
        cellCount += 1
    }

    /// Records that (`row`, `column`) is no longer occupied; it must be.
    mutating func remove(row: Int, column: Int) {
        guard let slot = rowIndex[Int64(row)].map(Int.init) else { preconditionFailure("row \(row) is not occupied") }
        let at = rows[slot].columns.withUnsafeBufferPointer { Self.lowerBound($0, column) }
        precondition(
            at < rows[slot].columns.count && Self.column(rows[slot].columns[at]) == column,
            "cell \(row), \(column) is not occupied")
        rows[slot].columns.remove(at: at)
        cellCount -= 1
        if rows[slot].columns.isEmpty {
            rowIndex.removeValue(forKey: Int64(row))
            if rows[slot].columns.capacity > 16 { rows[slot].columns = [] }
            freeRows.append(Int32(slot))
        }
    }

    /// Calls `body` with the index of every occupied cell of `row` whose column is in `run` (a row of `columns`).
    @inline(__always)
    func forEachCell(row: Int, in run: ColumnRun, columns: Int, _ body: (Int) -> Void) {
        if run.count <= 0 { return }
        guard let slot = rowIndex[Int64(row)] else { return }
        rows[Int(slot)].columns.withUnsafeBufferPointer { list in
            let end = run.start + run.count - 1
            if end < columns {
                Self.visit(list, from: run.start, through: end, body)
            } else {
                Self.visit(list, from: run.start, through: columns - 1, body)
                Self.visit(list, from: 0, through: end - columns, body)
            }
        }
    }

    @inline(__always)
    private static func visit(
        _ list: UnsafeBufferPointer<UInt64>, from first: Int, through last: Int,
        _ body: (Int) -> Void
    ) {
        var at = first == 0 ? 0 : lowerBound(list, first)
        while at < list.count {
            let packed = list[at]
            if column(packed) > last { return }
            body(cell(packed))
            at += 1
        }
    }
}
