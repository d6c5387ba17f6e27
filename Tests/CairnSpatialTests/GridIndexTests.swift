// Insert, move and remove bookkeeping of GridIndex, and the awkward places it must answer correctly: across the
// antimeridian, around and at the poles, and with radii past half the Earth's circumference.

import CairnGeo
import Testing

@testable import CairnSpatial

@Suite(.timeLimit(.minutes(5)))
struct GridIndexTests {
    private func point(_ lat: Double, _ lon: Double) -> GeoPoint { SampleGeography.point(lat, lon) }

    private func ids(_ found: [(id: Int64, distance: Double)]) -> [Int64] { found.map(\.id).sorted() }

    @Test func insertCountsAndRemembersPositions() {
        var index = GridIndex()
        #expect(index.isEmpty)
        index.upsert(1, at: point(48.85, 2.35))
        index.upsert(2, at: point(48.86, 2.36))
        #expect(index.count == 2)
        #expect(index.contains(1) && index.contains(2) && !index.contains(3))
        #expect(index.position(of: 1) == point(48.85, 2.35))
        #expect(index.position(of: 3) == nil)
        expectConsistent(index)
    }

    @Test func sameCellMoveUpdatesCoordinatesInPlace() {
        var index = GridIndex(cellSize: 500)
        index.upsert(1, at: point(48.85, 2.35))
        index.upsert(2, at: point(48.85001, 2.35001))
        let cells = index.cells.count
        index.upsert(1, at: point(48.85002, 2.35002))
        #expect(index.count == 2)
        #expect(index.cells.count == cells)
        #expect(index.occupiedCellCount == 1)
        #expect(index.position(of: 1) == point(48.85002, 2.35002))
        expectConsistent(index)
    }

    @Test func crossCellMoveIsFoundAtTheNewPlaceOnly() {
        var index = GridIndex(cellSize: 500)
        let old = point(48.85, 2.35)
        let new = point(48.95, 2.55)
        index.upsert(1, at: old)
        index.upsert(2, at: point(48.8501, 2.3501))
        index.upsert(3, at: point(48.8502, 2.3502))
        index.upsert(1, at: new)
        #expect(index.count == 3)
        #expect(index.position(of: 1) == new)
        #expect(ids(index.query(within: 50, of: old)) == [2, 3])
        #expect(ids(index.query(within: 50, of: new)) == [1])
        #expect(index.nearest(1, to: new).first?.id == 1)
        expectConsistent(index)
    }

    @Test func removeForgetsAndUnknownIdsAreFalse() {
        var index = GridIndex()
        index.upsert(1, at: point(10, 10))
        index.upsert(2, at: point(10, 10))
        let removed = index.remove(1)
        let removedAgain = index.remove(1)
        let removedUnknown = index.remove(99)
        #expect(removed && !removedAgain && !removedUnknown)
        #expect(index.count == 1)
        #expect(index.position(of: 1) == nil)
        #expect(ids(index.query(within: 10, of: point(10, 10))) == [2])
        expectConsistent(index)
    }

    @Test func reinsertAfterRemove() {
        var index = GridIndex()
        index.upsert(7, at: point(-33.87, 151.21))
        index.remove(7)
        index.upsert(7, at: point(51.5, -0.12))
        #expect(index.count == 1)
        #expect(index.position(of: 7) == point(51.5, -0.12))
        #expect(ids(index.query(within: 1_000, of: point(51.5, -0.12))) == [7])
        #expect(index.query(within: 1_000, of: point(-33.87, 151.21)).isEmpty)
        expectConsistent(index)
    }

    @Test func removingTheMiddleOfACellKeepsTheOthersFindable() {
        var index = GridIndex()
        for id in Int64(0)..<10 { index.upsert(id, at: point(1, 1 + Double(id) * 1e-5)) }
        let removedThree = index.remove(3)
        let removedZero = index.remove(0)
        #expect(removedThree && removedZero)
        #expect(ids(index.query(within: 100, of: point(1, 1))) == [1, 2, 4, 5, 6, 7, 8, 9])
        for id in Int64(0)..<10 where id != 3 && id != 0 {
            #expect(index.position(of: id) == point(1, 1 + Double(id) * 1e-5))
        }
        expectConsistent(index)
    }

    @Test func emptiedCellsAreReusedSoChurnDoesNotGrow() {
        var index = GridIndex(cellSize: 50)
        var rng = SeededGenerator(seed: 3)
        for step in 0..<2_000 {
            let id = Int64(step % 5)
            index.upsert(id, at: SampleGeography.uniform(using: &rng))
        }
        #expect(index.count == 5)
        #expect(index.occupiedCellCount <= 5)
        #expect(index.cells.count <= 6)
        expectConsistent(index)
    }

    @Test func queriesAcrossTheAntimeridian() {
        var index = GridIndex()
        index.upsert(1, at: point(0, -179.99))
        index.upsert(2, at: point(0, 180))
        index.upsert(3, at: point(0, -180))
        index.upsert(4, at: point(0, 179.0))
        let center = point(0, 179.99)
        #expect(ids(index.query(within: 3_000, of: center)) == [1, 2, 3])
        let nearest = index.nearest(3, to: center).map(\.id)
        #expect(Set(nearest.prefix(2)) == [2, 3] && nearest.last == 1)
    }

    @Test func queriesOverThePole() {
        var index = GridIndex()
        index.upsert(1, at: point(89.99, -170))  // about 2.2 km from the centre, across the pole
        index.upsert(2, at: point(90, 0))
        index.upsert(3, at: point(89.9, 10))
        index.upsert(4, at: point(-90, 0))
        let center = point(89.99, 10)
        #expect(ids(index.query(within: 5_000, of: center)) == [1, 2])
        #expect(index.nearest(2, to: center).map(\.id) == [2, 1])
        #expect(ids(index.query(within: 1, of: point(90, 123))) == [2])
        #expect(ids(index.query(within: 1, of: point(-90, -45))) == [4])
    }

    @Test func halfTheCircumferenceReachesEverything() {
        var index = GridIndex(cellSize: 50)
        var rng = SeededGenerator(seed: 4)
        for id in Int64(0)..<500 { index.upsert(id, at: SampleGeography.uniform(using: &rng)) }
        let all = Array(Int64(0)..<500)
        #expect(ids(index.query(within: SampleGeography.halfCircumference, of: point(3, 4))) == all)
        #expect(ids(index.query(within: .infinity, of: point(-90, 0))) == all)
        #expect(index.nearest(1_000, to: point(0, 0)).count == 500)
    }

    @Test func degenerateArgumentsFindNothing() {
        var index = GridIndex()
        index.upsert(1, at: point(0, 0))
        #expect(index.query(within: -1, of: point(0, 0)).isEmpty)
        #expect(index.query(within: .nan, of: point(0, 0)).isEmpty)
        #expect(index.nearest(0, to: point(0, 0)).isEmpty)
        #expect(index.nearest(-3, to: point(0, 0)).isEmpty)
        #expect(index.nearest(1, to: point(0, 0), within: -1).isEmpty)
        #expect(index.nearest(1, to: point(0, 0), within: .nan).isEmpty)
        #expect(index.nearest(1, to: point(0, 0), within: 0).map(\.id) == [1])
        #expect(index.query(within: 0, of: point(0, 0)).map(\.id) == [1])
        #expect(GridIndex().nearest(5, to: point(0, 0)).isEmpty)
    }

    @Test func nearestRespectsTheMaximumRadiusAndBreaksTiesById() {
        var index = GridIndex()
        let center = point(40, -74)
        for id: Int64 in [9, 3, 5] { index.upsert(id, at: center) }
        index.upsert(1, at: point(40.01, -74))
        #expect(index.nearest(4, to: center).map(\.id) == [3, 5, 9, 1])
        #expect(index.nearest(2, to: center).map(\.id) == [3, 5])
        #expect(index.nearest(4, to: center, within: 100).map(\.id) == [3, 5, 9])
    }

    @Test func forEachReportsPositionsAndDistances() {
        var index = GridIndex()
        let center = point(35.68, 139.76)
        let spot = point(35.681, 139.761)
        index.upsert(42, at: spot)
        var seen: [(Int64, GeoPoint, Double)] = []
        index.forEach(within: 500, of: center) { seen.append(($0, $1, $2)) }
        #expect(seen.count == 1)
        #expect(seen.first?.0 == 42 && seen.first?.1 == spot && seen.first?.2 == center.distance(to: spot))
    }
}
