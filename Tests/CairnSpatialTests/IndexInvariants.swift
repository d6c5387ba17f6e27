// The bookkeeping a GridIndex must keep consistent after every mutation, checked from the inside: every id's
// packed slot points at an entry with that id in a cell filed under the key its position hashes to, the cell
// directory and the cell array agree, and free cells are empty and really free.

import Testing

@testable import CairnSpatial

func expectConsistent(_ index: GridIndex, sourceLocation: SourceLocation = #_sourceLocation) {
    var entryCount = 0
    for (cell, grid) in index.cells.enumerated() {
        if grid.key == CellKey.vacant {
            #expect(grid.entries.isEmpty, "free cell \(cell) holds entries", sourceLocation: sourceLocation)
            #expect(
                index.freeCells.contains(Int32(cell)), "vacant cell \(cell) not on the free list",
                sourceLocation: sourceLocation)
            continue
        }
        #expect(!grid.entries.isEmpty, "occupied cell \(cell) is empty", sourceLocation: sourceLocation)
        #expect(
            index.directory.cell(row: CellKey.row(grid.key), column: CellKey.column(grid.key)) == cell,
            "cell \(cell) not filed under its key", sourceLocation: sourceLocation)
        for (slot, entry) in grid.entries.enumerated() {
            entryCount += 1
            #expect(
                index.slots[entry.id] == GridIndex.pack(cell: cell, slot: slot),
                "id \(entry.id) has a stale slot", sourceLocation: sourceLocation)
            #expect(
                index.geometry.key(for: entry.point) == grid.key, "id \(entry.id) is in the wrong cell",
                sourceLocation: sourceLocation)
        }
    }
    #expect(entryCount == index.count, sourceLocation: sourceLocation)
    #expect(index.directory.cellCount + index.freeCells.count == index.cells.count, sourceLocation: sourceLocation)
}
