// SphereTree against brute-force haversine on seeded random data: points spread worldwide, clustered on the
// antimeridian and at both poles, exact ±90/±180 coordinates, duplicates of one position (ties broken by id);
// queries anywhere including those places, with limits from 1 to 100 and radii from 1 m to beyond half the globe,
// some exactly the distance to an indexed point. The ordered answers must be identical: same ids, same order,
// bit-identical distances. Removals are checked against the same reference.

import CairnGeo
import Testing

@testable import CairnSpatial

#if canImport(Glibc)
import Glibc
#endif

@Suite(.timeLimit(.minutes(5)))
struct SphereTreeTests {
    private typealias Found = [(id: Int64, distance: Double)]

    private func brute(_ points: [(id: Int64, point: GeoPoint)], _ k: Int, to center: GeoPoint, within: Double)
        -> Found
    {
        let all = points.compactMap { p -> (id: Int64, distance: Double)? in
            let d = center.distance(to: p.point)
            return d <= within ? (p.id, d) : nil
        }
        let sorted = all.sorted { $0.distance < $1.distance || ($0.distance == $1.distance && $0.id < $1.id) }
        return Array(sorted.prefix(max(0, k)))
    }

    private func same(_ a: Found, _ b: Found) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0.id == $1.id && $0.distance == $1.distance }
    }

    /// A point near the troublesome places: the antimeridian, the poles, or anywhere.
    private func randomPoint(_ g: inout SeededGenerator) -> GeoPoint {
        switch Int.random(in: 0..<10, using: &g) {
        case 0: return GeoPoint(lat: .random(in: -90...90, using: &g), lon: 180 - .random(in: 0...0.01, using: &g))!
        case 1: return GeoPoint(lat: .random(in: -90...90, using: &g), lon: -180 + .random(in: 0...0.01, using: &g))!
        case 2: return GeoPoint(lat: 90 - .random(in: 0...0.05, using: &g), lon: .random(in: -180...180, using: &g))!
        case 3: return GeoPoint(lat: -90 + .random(in: 0...0.05, using: &g), lon: .random(in: -180...180, using: &g))!
        case 4:
            let lat: Double = [-90, 90, 0, 45.5][Int.random(in: 0..<4, using: &g)]
            let lon: Double = [-180, 180, 0][Int.random(in: 0..<3, using: &g)]
            return GeoPoint(lat: lat, lon: lon)!
        case 5:  // a dense city: many near-ties
            return GeoPoint(
                lat: 46.0 + .random(in: 0...0.001, using: &g), lon: 7.0 + .random(in: 0...0.001, using: &g))!
        default:
            // Uniform on the sphere.
            let z = Double.random(in: -1...1, using: &g)
            return GeoPoint(lat: asin(z) * 180 / .pi, lon: .random(in: -180...180, using: &g))!
        }
    }

    private func dataset(_ n: Int, seed: UInt64) -> [(id: Int64, point: GeoPoint)] {
        var g = SeededGenerator(seed: seed)
        var points: [(id: Int64, point: GeoPoint)] = []
        for i in 0..<n {
            // Every tenth point repeats an earlier position exactly, so equal distances are common.
            if i > 0 && i % 10 == 0 {
                points.append((Int64(i * 7 + 3), points[Int.random(in: 0..<points.count, using: &g)].point))
            } else {
                points.append((Int64(i * 7 + 3), randomPoint(&g)))
            }
        }
        points.shuffle(using: &g)
        return points
    }

    @Test func agreesWithBruteForceOnGeneratedData() {
        let points = dataset(6000, seed: 13)
        let tree = SphereTree(points)
        #expect(tree.count == points.count)
        var g = SeededGenerator(seed: 1301)
        let radii: [Double] = [1, 50, 1000, 250_000, 5_000_000, 19_000_000, 20_100_000, .infinity]
        for q in 0..<1500 {
            let center =
                q % 3 == 0 ? points[Int.random(in: 0..<points.count, using: &g)].point : randomPoint(&g)
            let k = [1, 2, 5, 20, 37, 100][Int.random(in: 0..<6, using: &g)]
            var radius = radii[Int.random(in: 0..<radii.count, using: &g)]
            if q % 7 == 0 {  // exactly the distance to some point: the boundary is inclusive
                radius = center.distance(to: points[Int.random(in: 0..<points.count, using: &g)].point)
            }
            let found = tree.nearest(k, to: center, within: radius)
            let expected = brute(points, k, to: center, within: radius)
            #expect(same(found, expected), "query \(q): k \(k) radius \(radius) at \(center)")
            if !same(found, expected) { return }
        }
    }

    @Test func groupQueriesAgreeWithBruteForceOverThatGroup() {
        let points = dataset(5000, seed: 31)
        var g = SeededGenerator(seed: 3101)
        // Skewed groups, and more than 64 of them so several share the last mask bit: 0 common, 1 rare, 2…80.
        let groups: [UInt16] = points.map { _ in
            switch Int.random(in: 0..<100, using: &g) {
            case 0..<60: return 0
            case 60: return 1
            default: return UInt16.random(in: 2...80, using: &g)
            }
        }
        var tree = SphereTree(points, groups: groups)
        var live = Array(zip(points, groups))
        for _ in 0..<300 {  // removals too
            let victim = live.remove(at: Int.random(in: 0..<live.count, using: &g))
            let removed = tree.remove(victim.0.id)
            #expect(removed)
        }
        for q in 0..<900 {
            let group: UInt16 = [0, 1, 2, 63, 64, 80, 81][Int.random(in: 0..<7, using: &g)]
            let center = q % 2 == 0 ? live[Int.random(in: 0..<live.count, using: &g)].0.point : randomPoint(&g)
            let k = [1, 5, 20, 100][Int.random(in: 0..<4, using: &g)]
            let radius = [1000, 250_000, .infinity][Int.random(in: 0..<3, using: &g)]
            let members = live.filter { $0.1 == group }.map(\.0)
            let found = tree.nearest(k, to: center, within: radius, group: group)
            #expect(same(found, brute(members, k, to: center, within: radius)), "query \(q): group \(group) k \(k)")
            if !same(found, brute(members, k, to: center, within: radius)) { return }
        }
        #expect(SphereTree(points).nearest(5, to: points[0].point, group: 0).isEmpty)  // built without groups
        #expect(tree.nearest(5, to: points[0].point).count == 5)  // no group: every point
    }

    @Test func removedPointsAreNeverAnswered() {
        var points = dataset(3000, seed: 99)
        var tree = SphereTree(points)
        var g = SeededGenerator(seed: 7)
        for _ in 0..<800 {
            let victim = points.remove(at: Int.random(in: 0..<points.count, using: &g))
            let first = tree.remove(victim.id)
            let second = tree.remove(victim.id)
            #expect(first && !second)
        }
        #expect(tree.count == points.count)
        #expect(tree.slotCount == 3000)
        for q in 0..<300 {
            let center = randomPoint(&g)
            let found = tree.nearest(20, to: center)
            #expect(same(found, brute(points, 20, to: center, within: .infinity)), "query \(q) at \(center)")
        }
    }

    @Test func edgeCases() {
        #expect(SphereTree().nearest(5, to: GeoPoint(lat: 0, lon: 0)!).isEmpty)
        let points: [(id: Int64, point: GeoPoint)] = [
            (5, GeoPoint(lat: 0, lon: 179.9999)!), (3, GeoPoint(lat: 0, lon: -179.9999)!),
            (9, GeoPoint(lat: 10, lon: 0)!), (4, GeoPoint(lat: 0, lon: 179.9999)!),
        ]
        let tree = SphereTree(points)
        // Across the antimeridian: the two at 179.9999 tie and are ordered by id; -179.9999 is as near.
        let found = tree.nearest(3, to: GeoPoint(lat: 0, lon: 180)!)
        #expect(found.map(\.id) == [3, 4, 5] || found.map(\.id) == [4, 5, 3])
        #expect(same(found, brute(points, 3, to: GeoPoint(lat: 0, lon: 180)!, within: .infinity)))
        #expect(tree.nearest(0, to: GeoPoint(lat: 0, lon: 0)!).isEmpty)
        #expect(tree.nearest(3, to: GeoPoint(lat: 0, lon: 0)!, within: -1).isEmpty)
        #expect(tree.nearest(3, to: GeoPoint(lat: 0, lon: 0)!, within: .nan).isEmpty)
        #expect(tree.nearest(10, to: GeoPoint(lat: 0, lon: 0)!).count == 4)
        // An id given twice keeps its last point.
        let twice = SphereTree([(1, GeoPoint(lat: 0, lon: 0)!), (1, GeoPoint(lat: 50, lon: 50)!)])
        #expect(twice.count == 1)
        #expect(twice.nearest(1, to: GeoPoint(lat: 50, lon: 50)!).first?.distance == 0)
    }
}
