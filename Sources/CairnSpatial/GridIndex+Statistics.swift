// What the index holds and roughly what it costs, for the hub's stats page and the benchmark's memory breakdown.
// The byte figure counts the live capacity of each structure (hash tables at their current capacity, every cell's
// entry buffer at its capacity) but not the allocator's own overhead, so it is a floor on what malloc holds.

public import CairnGeo

extension GridIndex {
    /// Counts and the approximate storage of one index.
    public struct Statistics: Sendable, Equatable {
        /// Indexed points.
        public var points: Int
        /// Cells holding at least one point.
        public var occupiedCells: Int
        /// Emptied cells kept for reuse.
        public var freeCells: Int
        /// Entry slots allocated across all cells (≥ points; the rest is growth room).
        public var entryCapacity: Int
        /// Bytes in the id → slot table at its current capacity.
        public var slotTableBytes: Int
        /// Bytes in the row directory (occupied rows and their sorted column lists).
        public var directoryBytes: Int
        /// Bytes in the cell array and the cells' entry buffers (with their headers).
        public var cellBytes: Int

        /// Sum of the structures above.
        public var totalBytes: Int { slotTableBytes + directoryBytes + cellBytes }
    }

    /// The key of the cell that holds `point` on this index's grid: equal keys mean the same cell.
    public func cellKey(for point: GeoPoint) -> Int64 {
        geometry.key(for: point)
    }

    /// Counts and approximate storage; walks every cell, so O(cells).
    public var statistics: Statistics {
        let arrayHeader = 32
        var entryCapacity = 0
        var entryBuffers = 0
        for cell in cells where cell.entries.capacity > 0 {
            entryCapacity += cell.entries.capacity
            entryBuffers += arrayHeader
        }
        // The id table is an Int64Map: 16-byte buckets holding a key and its value.
        let bucket = 16
        return Statistics(
            points: slots.count,
            occupiedCells: directory.cellCount,
            freeCells: freeCells.count,
            entryCapacity: entryCapacity,
            slotTableBytes: slots.bucketCount * bucket + arrayHeader,
            directoryBytes: directory.storageBytes,
            cellBytes: cells.capacity * MemoryLayout<GridCell>.stride + freeCells.capacity * 4
                + entryCapacity * MemoryLayout<GridEntry>.stride + entryBuffers
        )
    }
}
