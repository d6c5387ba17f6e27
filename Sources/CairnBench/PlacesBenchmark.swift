// The places benchmark (`cairn-bench places`): one SphereTree over N synthetic places spread uniformly over the
// sphere (a million by default), measured for what `places.nearest` does with it — k-nearest (20 by default),
// unbounded and within a radius — against a brute-force haversine scan of the same points in the same run. Every
// brute-force answer is compared with the tree's, ids, order and distances, so the figures are of exact queries
// only. A share of the query centres sits near the poles and the antimeridian. Memory per place is glibc's count
// of bytes in use (mallinfo2) before and after building the tree.

import CairnApp
import CairnGeo
import CairnSeed
import CairnSpatial

#if canImport(Glibc)
import Glibc
#endif

let placesBenchmarkUsage = """
    usage: cairn-bench places [--points N | --csv FILE] [--queries N] [--brute N] [--limit K] [--radius M]
                              [--seed S] [--near yes|no]
      Builds a SphereTree of --points (1,000,000) uniform worldwide points, or of the places in a CSV file in
      `cairn places import` format (--csv), and times --queries (20,000) k-nearest queries (--limit, default 20),
      unbounded and within --radius metres (default 50,000), against --brute (20) brute-force scans whose answers
      must be identical. Query centres are anywhere on the sphere (a tenth near the antimeridian, a tenth near the
      north pole), or with --near yes within about 50 km of a random place.
    """

/// `cairn-bench places`: see the file comment.
func runPlacesBenchmark(arguments: [String]) throws {
    var points = 1_000_000
    var queries = 20_000
    var brute = 20
    var limit = 20
    var radius = 50_000.0
    var seed: UInt64 = 13
    var csv: String?
    var near = false
    var i = 0
    while i < arguments.count {
        guard i + 1 < arguments.count else { throw BenchOptionError("\(arguments[i]) needs a value") }
        let value = arguments[i + 1]
        switch arguments[i] {
        case "--points": points = try positive(value, arguments[i])
        case "--queries": queries = try positive(value, arguments[i])
        case "--brute": brute = try positive(value, arguments[i])
        case "--limit": limit = try positive(value, arguments[i])
        case "--radius": radius = Double(try positive(value, arguments[i]))
        case "--seed": seed = UInt64(try positive(value, arguments[i]))
        case "--csv": csv = value
        case "--near": near = value == "yes"
        default: throw BenchOptionError("unknown option \(arguments[i])\n\(placesBenchmarkUsage)")
        }
        i += 2
    }
    var rng = SplitMix64(seed: seed)
    func uniform() -> GeoPoint {
        let z = Double.random(in: -1...1, using: &rng)
        return GeoPoint(lat: asin(z) * 180 / .pi, lon: .random(in: -180...180, using: &rng))!
    }
    func centre(_ n: Int) -> GeoPoint {
        switch n % 10 {
        case 0: return GeoPoint(lat: .random(in: -90...90, using: &rng), lon: 180 - .random(in: 0...0.5, using: &rng))!
        case 1: return GeoPoint(lat: 90 - .random(in: 0...0.5, using: &rng), lon: .random(in: -180...180, using: &rng))!
        default: return uniform()
        }
    }
    var places = (0..<(csv == nil ? points : 0)).map { (id: Int64($0 + 1), point: uniform()) }
    var what = "\(points) uniform worldwide points"
    if let csv {
        let fd = open(csv, O_RDONLY)
        guard fd >= 0 else { throw BenchOptionError("cannot read \(csv)") }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        close(fd)
        let parsed = PlaceCSV.parse(bytes)
        places = parsed.places.enumerated().map {
            (Int64($0.offset + 1), GeoPoint(lat: $0.element.lat, lon: $0.element.lon)!)
        }
        points = places.count
        what = "\(points) places from \(csv)"
    }
    let heapBefore = IndexBenchmark.heapBytesInUse()
    let buildStart = IndexBenchmark.now()
    let tree = SphereTree(places)
    let buildSeconds = Double(IndexBenchmark.now() - buildStart) / 1e9
    let heapAfter = IndexBenchmark.heapBytesInUse()
    // --near yes: where users are, next to places (a random place, moved up to ~50 km); otherwise anywhere.
    let centres = (0..<queries).map { n -> GeoPoint in
        guard near else { return centre(n) }
        let p = places[Int.random(in: 0..<places.count, using: &rng)].point
        let lat = min(90, max(-90, p.lat + .random(in: -0.45...0.45, using: &rng)))
        var lon = p.lon + .random(in: -0.45...0.45, using: &rng)
        if lon > 180 { lon -= 360 } else if lon < -180 { lon += 360 }
        return GeoPoint(lat: lat, lon: lon)!
    }

    func timeTree(within: Double) -> (Double, Int) {
        var found = 0
        let start = IndexBenchmark.now()
        for c in centres { found += tree.nearest(limit, to: c, within: within).count }
        return (Double(IndexBenchmark.now() - start) / 1e3 / Double(queries), found)
    }
    let (treeMicros, treeFound) = timeTree(within: .infinity)
    let (radiusMicros, radiusFound) = timeTree(within: radius)

    var bruteNanos: UInt64 = 0
    var identical = 0
    for n in 0..<brute {
        let c = centres[n * max(1, queries / brute) % queries]
        let start = IndexBenchmark.now()
        var best: [(id: Int64, distance: Double)] = []
        best.reserveCapacity(limit + 1)
        for p in places {
            let d = c.distance(to: p.point)
            if best.count == limit, let last = best.last, !(d < last.distance || (d == last.distance && p.id < last.id))
            {
                continue
            }
            var at = best.count
            while at > 0 && (d < best[at - 1].distance || (d == best[at - 1].distance && p.id < best[at - 1].id)) {
                at -= 1
            }
            best.insert((p.id, d), at: at)
            if best.count > limit { best.removeLast() }
        }
        bruteNanos += IndexBenchmark.now() - start
        let answer = tree.nearest(limit, to: c)
        if answer.count == best.count && zip(answer, best).allSatisfy({ $0.id == $1.id && $0.distance == $1.distance })
        {
            identical += 1
        }
    }
    let bruteMicros = Double(bruteNanos) / 1e3 / Double(brute)
    let heapText = heapBefore.flatMap { b in heapAfter.map { String(format2((Double($0 - b)) / Double(points))) } }
    print("places: \(what), seed \(seed), \(limit)-nearest")
    print("build:   \(format2(buildSeconds)) s; \(heapText ?? "?") B/place heap in use (mallinfo2)")
    print("tree:    \(format2(treeMicros)) µs/query unbounded (\(queries) queries, \(treeFound) results)")
    print("         \(format2(radiusMicros)) µs/query within \(Int(radius)) m (\(radiusFound) results)")
    print("brute:   \(format2(bruteMicros)) µs/query (\(brute) queries)")
    print("speed-up: \(format2(bruteMicros / treeMicros))×; identical ordered answers: \(identical)/\(brute)")
}

private func positive(_ text: String, _ option: String) throws -> Int {
    guard let value = Int(text), value > 0 else { throw BenchOptionError("\(option) must be a positive integer") }
    return value
}

private func format2(_ value: Double) -> String {
    let scaled = (value * 100).rounded()
    let whole = Int(scaled / 100)
    let cents = abs(Int(scaled) % 100)
    return "\(whole).\(cents < 10 ? "0" : "")\(cents)"
}

/// A bad option.
struct BenchOptionError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
