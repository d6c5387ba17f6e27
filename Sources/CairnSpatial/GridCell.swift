// One occupied cell: its key and a contiguous array of (id, position) entries. Scans read a cell front to back,
// so keeping id and coordinates together in one 24-byte entry costs one allocation per cell and one cache line
// per 2.7 points. Order inside a cell carries no meaning, which is what makes removal a swap with the last entry.

import CairnGeo

/// One indexed point as stored in its cell.
struct GridEntry {
    var id: Int64
    var point: GeoPoint
}

/// An occupied (or, with key `CellKey.vacant`, a free and reusable) cell.
struct GridCell {
    /// Above this many entries of capacity a cell that empties gives its buffer back instead of keeping it for reuse.
    static let retainedCapacity = 16

    var key: Int64
    var entries: [GridEntry]

    init(key: Int64) {
        self.key = key
        entries = []
    }
}
