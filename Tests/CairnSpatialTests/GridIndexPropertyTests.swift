// GridIndex against brute force on seeded random data: thousands of points mixing uniform spread, clusters on the
// antimeridian and at both poles and exact ±90/±180 coordinates; centres anywhere including the poles and the
// antimeridian; radii from 1 m to 20,000 km, some exactly the distance to an indexed point. Radius queries must
// return exactly the brute-force set with identical distances, nearest(k) exactly the brute-force k smallest by
// (distance, id), under each way of reading cells. Random interleavings of upserts, moves and removals are checked
// against a reference dictionary.

import CairnGeo
import Testing

@testable import CairnSpatial

@Suite(.timeLimit(.minutes(5)))
struct GridIndexPropertyTests {
    private typealias Found = [(id: Int64, distance: Double)]

    private func bruteForce(_ points: [Int64: GeoPoint], within radius: Double, of center: GeoPoint) -> Found {
        points.compactMap { id, point in
            let distance = center.distance(to: point)
            return distance <= radius ? (id, distance) : nil
        }
    }

    private func bruteNearest(_ points: [Int64: GeoPoint], _ k: Int, to center: GeoPoint, within limit: Double) -> Found
    {
        let sorted = bruteForce(points, within: limit, of: center).sorted {
            $0.distance < $1.distance || ($0.distance == $1.distance && $0.id < $1.id)
        }
        return Array(sorted.prefix(max(0, k)))
    }

    /// Same ids with bit-identical distances.
    private func expectSame(
        _ found: Found, _ expected: Found, _ context: @autoclosure () -> String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let a = found.sorted { $0.id < $1.id }
        let b = expected.sorted { $0.id < $1.id }
        let same = a.count == b.count && zip(a, b).allSatisfy { $0.id == $1.id && $0.distance == $1.distance }
        if !same {
            let missing = Set(b.map(\.id)).subtracting(a.map(\.id)).prefix(5)
            let extra = Set(a.map(\.id)).subtracting(b.map(\.id)).prefix(5)
            Issue.record(
                "\(context()): got \(a.count), expected \(b.count); missing \(Array(missing)), extra \(Array(extra))",
                sourceLocation: sourceLocation)
        }
    }

    private func expectSameOrder(
        _ found: Found, _ expected: Found, _ context: @autoclosure () -> String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let same =
            found.count == expected.count
            && zip(found, expected).allSatisfy { $0.id == $1.id && $0.distance == $1.distance }
        if !same {
            let got = found.prefix(6).map(\.id)
            let wanted = expected.prefix(6).map(\.id)
            Issue.record(
                "\(context()): got \(got), expected \(wanted) (\(found.count) vs \(expected.count))",
                sourceLocation: sourceLocation)
        }
    }

    private func populated(cellSize: Double, count: Int, seed: UInt64) -> (GridIndex, [Int64: GeoPoint], [GeoPoint]) {
        var rng = SeededGenerator(seed: seed)
        let points = SampleGeography.mixedPoints(count: count, using: &rng)
        var index = GridIndex(cellSize: cellSize)
        var reference: [Int64: GeoPoint] = [:]
        for (offset, point) in points.enumerated() {
            // Sparse, signed ids, as real ids are.
            let id = Int64(offset) * 7_919 - 1_000_000
            index.upsert(id, at: point)
            reference[id] = point
        }
        return (index, reference, points)
    }

    @Test(arguments: [50.0, 500, 5_000])
    func radiusQueriesMatchBruteForce(_ cellSize: Double) {
        var (index, reference, points) = populated(cellSize: cellSize, count: 3_000, seed: UInt64(cellSize) + 11)
        var rng = SeededGenerator(seed: UInt64(cellSize) * 3)
        for policy in [GridIndex.ScanPolicy.automatic, .occupiedCells] {
            index.scanPolicy = policy
            for query in 0..<150 {
                let center = SampleGeography.center(among: points, using: &rng)
                let radius = SampleGeography.radius(from: center, among: points, using: &rng)
                expectSame(
                    index.query(within: radius, of: center), bruteForce(reference, within: radius, of: center),
                    "\(policy) query \(query) at \(center.lat),\(center.lon) r \(radius)")
            }
        }
    }

    @Test(arguments: [50.0, 500, 5_000])
    func coverWalkMatchesBruteForce(_ cellSize: Double) {
        // The cover walk alone, with radii kept to a few thousand cells so a debug build stays quick.
        var (index, reference, points) = populated(cellSize: cellSize, count: 3_000, seed: UInt64(cellSize) + 12)
        index.scanPolicy = .cover
        var rng = SeededGenerator(seed: UInt64(cellSize) * 5)
        for query in 0..<200 {
            let center = SampleGeography.center(among: points, using: &rng)
            var radius = SampleGeography.radius(from: center, among: points, using: &rng)
            radius = min(radius, cellSize * 25)
            expectSame(
                index.query(within: radius, of: center), bruteForce(reference, within: radius, of: center),
                "cover query \(query) at \(center.lat),\(center.lon) r \(radius)")
            let k = [1, 3, 20].randomElement(using: &rng)!
            expectSameOrder(
                index.nearest(k, to: center, within: radius), bruteNearest(reference, k, to: center, within: radius),
                "cover nearest \(k) at \(center.lat),\(center.lon) within \(radius)")
        }
    }

    @Test(arguments: [50.0, 500, 5_000])
    func nearestMatchesBruteForce(_ cellSize: Double) {
        var (index, reference, points) = populated(cellSize: cellSize, count: 3_000, seed: UInt64(cellSize) + 13)
        var rng = SeededGenerator(seed: UInt64(cellSize) * 7)
        for policy in [GridIndex.ScanPolicy.automatic, .occupiedCells] {
            index.scanPolicy = policy
            for query in 0..<150 {
                let center = SampleGeography.center(among: points, using: &rng)
                let k = [1, 2, 5, 20, 100, 3_100].randomElement(using: &rng)!
                let limit =
                    Bool.random(using: &rng)
                    ? .infinity : SampleGeography.radius(from: center, among: points, using: &rng)
                expectSameOrder(
                    index.nearest(k, to: center, within: limit), bruteNearest(reference, k, to: center, within: limit),
                    "\(policy) nearest \(k) query \(query) at \(center.lat),\(center.lon) within \(limit)")
            }
        }
    }

    @Test func denseClustersWithTiesMatchBruteForce() {
        // Many points at identical coordinates and on cell edges: ties must be broken by id.
        var rng = SeededGenerator(seed: 21)
        var index = GridIndex(cellSize: 50)
        var reference: [Int64: GeoPoint] = [:]
        let spots = [
            SampleGeography.point(0, 180), SampleGeography.point(0, -180), SampleGeography.point(90, 0),
            SampleGeography.point(51.5, -0.1), SampleGeography.point(51.5, -0.1005),
        ]
        for id in Int64(0)..<1_500 {
            let point = spots.randomElement(using: &rng)!
            index.upsert(id, at: point)
            reference[id] = point
        }
        for center in spots {
            for k in [1, 7, 300, 2_000] {
                expectSameOrder(
                    index.nearest(k, to: center), bruteNearest(reference, k, to: center, within: .infinity),
                    "ties nearest \(k) at \(center.lat),\(center.lon)")
            }
            for radius in [0.0, 1, 40, 200_000] {
                expectSame(
                    index.query(within: radius, of: center), bruteForce(reference, within: radius, of: center),
                    "ties query at \(center.lat),\(center.lon) r \(radius)")
            }
        }
    }

    @Test(arguments: [50.0, 500, 5_000])
    func interleavedMutationsMatchAReferenceDictionary(_ cellSize: Double) {
        var rng = SeededGenerator(seed: UInt64(cellSize) + 31)
        var index = GridIndex(cellSize: cellSize)
        var reference: [Int64: GeoPoint] = [:]
        var anchors = SampleGeography.mixedPoints(count: 50, using: &rng)
        for step in 0..<6_000 {
            let id = Int64.random(in: -200...200, using: &rng)
            switch Int.random(in: 0..<10, using: &rng) {
            case 0...3:  // insert or jump anywhere
                let point = SampleGeography.mixedPoints(count: 1, using: &rng)[0]
                index.upsert(id, at: point)
                reference[id] = point
            case 4...6:  // a small move, usually within the cell
                let from = reference[id] ?? anchors.randomElement(using: &rng)!
                let point = SampleGeography.near(from, within: cellSize * 0.3, using: &rng)
                index.upsert(id, at: point)
                reference[id] = point
            default:
                let removed = index.remove(id)
                let known = reference.removeValue(forKey: id) != nil
                #expect(removed == known, "remove \(id) at step \(step)")
            }
            if step % 500 == 0 {
                expectConsistent(index)
                anchors = Array(reference.values.prefix(50)) + anchors.prefix(10)
            }
            if step % 20 == 0 {
                let center = SampleGeography.center(among: anchors, using: &rng)
                let radius = SampleGeography.radius(from: center, among: anchors, using: &rng)
                expectSame(
                    index.query(within: radius, of: center), bruteForce(reference, within: radius, of: center),
                    "step \(step) query at \(center.lat),\(center.lon) r \(radius)")
                expectSameOrder(
                    index.nearest(5, to: center), bruteNearest(reference, 5, to: center, within: .infinity),
                    "step \(step) nearest at \(center.lat),\(center.lon)")
            }
            #expect(index.count == reference.count)
        }
        for (id, point) in reference { #expect(index.position(of: id) == point) }
        for id in Int64(-200)...200 where reference[id] == nil { #expect(!index.contains(id)) }
        expectConsistent(index)
    }
}
