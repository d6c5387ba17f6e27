// Layers are separate worlds: the same id may sit in several layers at different places, and queries, counts and
// removals on one layer never see or touch another.

import CairnGeo
import CairnSpatial
import Testing

@Suite(.timeLimit(.minutes(5)))
struct LayeredIndexTests {
    private let here = SampleGeography.point(52.52, 13.405)
    private let there = SampleGeography.point(52.53, 13.41)

    @Test func layersDoNotSeeEachOthersPoints() {
        var index = LayeredIndex()
        index.upsert(1, at: here, in: .users)
        index.upsert(2, at: here, in: .trackers)
        index.upsert(3, at: here, in: .relics)
        #expect(index.query(in: .users, within: 100, of: here).map(\.id) == [1])
        #expect(index.query(in: .trackers, within: 100, of: here).map(\.id) == [2])
        #expect(index.nearest(5, to: here, in: .relics).map(\.id) == [3])
        #expect(index.nearest(5, to: here, in: .places).isEmpty)
        var seen: [Int64] = []
        index.forEach(in: .users, within: 100, of: here) { id, _, _ in seen.append(id) }
        #expect(seen == [1])
        #expect(index.count(in: .users) == 1 && index.count(in: .places) == 0)
        #expect(index.totalCount == 3)
    }

    @Test func theSameIdLivesIndependentlyInEachLayer() {
        var index = LayeredIndex(cellSize: 200)
        index.upsert(7, at: here, in: .users)
        index.upsert(7, at: there, in: .trackers)
        #expect(index.position(of: 7, in: .users) == here)
        #expect(index.position(of: 7, in: .trackers) == there)
        index.upsert(7, at: there, in: .users)
        #expect(index.position(of: 7, in: .trackers) == there)
        let removed = index.remove(7, from: .trackers)
        let removedAgain = index.remove(7, from: .trackers)
        let removedFromPlaces = index.remove(7, from: .places)
        #expect(removed && !removedAgain && !removedFromPlaces)
        #expect(index.contains(7, in: .users))
        #expect(!index.contains(7, in: .trackers))
        #expect(index[.users].count == 1)
        #expect(index[.users].cellSize == 200)
    }

    @Test func everyLayerIsUsable() {
        var index = LayeredIndex()
        for layer in SpatialLayer.allCases { index.upsert(Int64(layer.rawValue), at: here, in: layer) }
        for layer in SpatialLayer.allCases {
            #expect(index.query(in: layer, within: 1, of: here).map(\.id) == [Int64(layer.rawValue)])
        }
    }
}
