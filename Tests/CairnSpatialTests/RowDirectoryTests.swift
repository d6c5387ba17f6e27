// The row directory against a reference set of occupied cells: lookups after random occupy/vacate sequences, and
// the cells reported for column runs, including runs that wrap past the antimeridian and whole rows.

import Testing

@testable import CairnSpatial

@Suite(.timeLimit(.minutes(5)))
struct RowDirectoryTests {
    private struct Cell: Hashable {
        var row: Int
        var column: Int
    }

    @Test func randomOccupancyMatchesAReferenceSet() {
        var rng = SeededGenerator(seed: 41)
        var directory = RowDirectory()
        var reference: [Cell: Int] = [:]
        let columns = 50
        for step in 0..<8_000 {
            let cell = Cell(row: Int.random(in: 0..<6, using: &rng), column: Int.random(in: 0..<columns, using: &rng))
            if reference[cell] != nil {
                directory.remove(row: cell.row, column: cell.column)
                reference[cell] = nil
            } else {
                directory.insert(row: cell.row, column: cell.column, cell: step)
                reference[cell] = step
            }
            #expect(directory.cellCount == reference.count)
            if step % 97 == 0 {
                for row in 0..<6 {
                    for column in 0..<columns {
                        #expect(directory.cell(row: row, column: column) == reference[Cell(row: row, column: column)])
                    }
                    // A random run, possibly wrapping, possibly the whole row.
                    let run = ColumnRun(
                        start: Int.random(in: 0..<columns, using: &rng),
                        count: Int.random(in: 0...columns, using: &rng))
                    var seen: [Int] = []
                    directory.forEachCell(row: row, in: run, columns: columns) { seen.append($0) }
                    let expected = (0..<columns).filter { run.contains($0, columns: columns) }
                        .compactMap { reference[Cell(row: row, column: $0)] }
                    #expect(seen.sorted() == expected.sorted(), "row \(row) run \(run.start)+\(run.count)")
                }
            }
        }
        #expect(directory.rowCount == Set(reference.keys.map(\.row)).count)
    }

    @Test func emptiedRowsAreForgotten() {
        var directory = RowDirectory()
        directory.insert(row: 7, column: 3, cell: 0)
        directory.insert(row: 7, column: 1, cell: 1)
        directory.remove(row: 7, column: 3)
        directory.remove(row: 7, column: 1)
        #expect(directory.rowCount == 0 && directory.cellCount == 0)
        #expect(directory.cell(row: 7, column: 1) == nil)
        directory.insert(row: 9, column: 0, cell: 2)
        #expect(directory.cell(row: 9, column: 0) == 2)
    }
}
