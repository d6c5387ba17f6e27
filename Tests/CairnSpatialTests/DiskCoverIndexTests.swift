// DiskCoverIndex against brute force: seeded disks of 10 m to 5 km around mixed points (poles and antimeridian
// included), probed with points near and exactly on their edges; the disks containing a probe must be exactly those
// whose centre is within the radius. Also removal, replacement and an empty lookup.

import CairnGeo
import Testing

@testable import CairnSpatial

@Suite(.timeLimit(.minutes(5)))
struct DiskCoverIndexTests {
    @Test func matchesBruteForceEverywhere() {
        for cellSize in [200.0, 1_000, 5_000] {
            var rng = SeededGenerator(seed: 77 + UInt64(cellSize))
            let centres = SampleGeography.mixedPoints(count: 400, using: &rng)
            var index = DiskCoverIndex(cellSize: cellSize)
            var reference: [Int64: (GeoPoint, Double)] = [:]
            for (n, centre) in centres.enumerated() {
                let radius = 10 + Double(rng.next() % 4_991)
                index.insert(Int64(n), center: centre, radius: radius)
                reference[Int64(n)] = (centre, radius)
            }
            var probes: [GeoPoint] = []
            for (n, centre) in centres.enumerated() where n % 2 == 0 {
                let radius = reference[Int64(n)]!.1
                probes.append(SampleGeography.near(centre, within: radius * 1.2, using: &rng))
                // On the edge, a hair inside and a hair outside.
                let bearing = Double(rng.next() % 360)
                probes.append(SampleGeography.destination(from: centre, bearing: bearing, distance: radius * 0.999))
                probes.append(SampleGeography.destination(from: centre, bearing: bearing, distance: radius * 1.001))
            }
            probes.append(SampleGeography.point(90, 0))
            probes.append(SampleGeography.point(-90, 180))
            probes.append(SampleGeography.point(0, 180))
            probes.append(SampleGeography.point(0, -180))
            for probe in probes {
                let expected = Set(reference.filter { $0.value.0.distance(to: probe) <= $0.value.1 }.keys)
                let found = index.disks(containing: probe)
                #expect(found.count == Set(found).count, "a disk was reported twice at \(probe)")
                #expect(Set(found) == expected, "cell \(cellSize) m, probe \(probe)")
            }
        }
    }

    @Test func removeAndReplace() {
        var index = DiskCoverIndex(cellSize: 1_000)
        let a = SampleGeography.point(48.85, 2.35)
        let b = SampleGeography.point(51.5, -0.12)
        index.insert(1, center: a, radius: 300)
        index.insert(2, center: a, radius: 50)
        #expect(Set(index.disks(containing: a)) == [1, 2])
        index.insert(1, center: b, radius: 300)  // replaced: no longer at a
        #expect(index.disks(containing: a) == [2])
        #expect(index.disks(containing: b) == [1])
        let removed = index.remove(2)
        let again = index.remove(2)
        #expect(removed)
        #expect(!again)
        #expect(index.disks(containing: a).isEmpty)
        #expect(index.count == 1)
        let last = index.remove(1)
        #expect(last)
        #expect(index.occupiedCells == 0, "removal must leave no empty cell lists behind")
    }

    @Test func aDiskAcrossTheAntimeridianIsFoundOnBothSides() {
        var index = DiskCoverIndex(cellSize: 1_000)
        index.insert(9, center: SampleGeography.point(-16.5, 179.999), radius: 2_000)
        #expect(index.disks(containing: SampleGeography.point(-16.5, -179.995)) == [9])
        #expect(index.disks(containing: SampleGeography.point(-16.5, 179.99)) == [9])
        #expect(index.disks(containing: SampleGeography.point(-16.5, -179.9)).isEmpty)
    }
}
