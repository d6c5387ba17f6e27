// The spatial index benchmark (`cairn-bench index`): one GridIndex over a million points, measured for what the
// hub does with it — insert, small moves, a radius query sized to return ~75 points, and 20-nearest — with the
// same queries answered by a brute-force scan of the same points in the same run, so the speed-up is a ratio
// measured side by side (the absolute times on a shared 2-core machine are not a result). Every brute-force
// query is also compared with the index's answer, so the figures are of correct queries only. Memory per point is
// glibc's count of bytes in use (mallinfo2: uordblks + hblkhd) before and after building the index, a count that
// does not depend on speed; the resident-set delta from /proc/self/statm is printed beside it.
//
// Scenarios: a 40 km × 40 km city box (the hub's real shape: dense, local), and the whole sphere uniformly (the
// worst case for a fixed cell size, shown at the default size and at a coarser one).

import CairnApp
import CairnGeo
import CairnSeed
import CairnSpatial

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let indexBenchmarkUsage = """
    usage: cairn-bench index [--points N] [--queries N] [--brute N] [--rounds N] [--target N]
                             [--scenario city|world|world-coarse|all] [--cell-size M]
      Builds a GridIndex of --points (1,000,000) and measures inserts, moves, radius queries returning about
      --target (75) points and 20-nearest queries (--queries each per round, default 2,000), against a brute-force
      scan (--brute queries per round, default 10) over --rounds (3) rounds. --cell-size overrides every scenario's
      cell size (default 500 m; world-coarse uses 20 km).
    """

/// `cairn-bench index`: see the file comment.
func runIndexBenchmark(arguments: [String]) {
    do {
        let benchmark = try IndexBenchmark(arguments: arguments)
        benchmark.run()
    } catch {
        print("cairn-bench index: \(error)\n\(indexBenchmarkUsage)")
        exit(2)
    }
}

private struct IndexBenchmarkError: Error, CustomStringConvertible {
    var description: String
}

struct IndexBenchmark {
    enum Scenario: String, CaseIterable {
        case city, world
        case worldCoarse = "world-coarse"
    }

    var points = 1_000_000
    var queries = 2_000
    var bruteQueries = 10
    var rounds = 3
    var target = 75.0
    var scenarios = Scenario.allCases
    var cellSize: Double?

    init(arguments: [String]) throws {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw IndexBenchmarkError(description: "\(flag) needs a value") }
            switch flag {
            case "--points": points = try Self.positive(value, flag)
            case "--queries": queries = try Self.positive(value, flag)
            case "--brute": bruteQueries = try Self.positive(value, flag)
            case "--rounds": rounds = try Self.positive(value, flag)
            case "--target": target = Double(try Self.positive(value, flag))
            case "--cell-size":
                guard let size = Double(value), GridIndex.cellSizeRange.contains(size) else {
                    throw IndexBenchmarkError(description: "--cell-size takes 10 ... 100000 (metres)")
                }
                cellSize = size
            case "--scenario":
                if value == "all" {
                    scenarios = Scenario.allCases
                } else if let scenario = Scenario(rawValue: value) {
                    scenarios = [scenario]
                } else {
                    throw IndexBenchmarkError(description: "--scenario takes city, world, world-coarse or all")
                }
            default: throw IndexBenchmarkError(description: "unknown option \(flag)")
            }
        }
    }

    private static func positive(_ text: String, _ flag: String) throws -> Int {
        guard let value = Int(text), value > 0 else {
            throw IndexBenchmarkError(description: "\(flag) takes a positive integer")
        }
        return value
    }

    func run() {
        print(
            "spatial index: GridIndex, \(points) points, \(queries) index queries and \(bruteQueries) brute-force "
                + "queries per kind per round, \(rounds) rounds (medians reported)")
        for (number, scenario) in scenarios.enumerated() {
            runScenario(scenario, firstInProcess: number == 0)
        }
    }

    // MARK: - One scenario

    private func runScenario(_ scenario: Scenario, firstInProcess: Bool) {
        var rng = SplitMix64(seed: 0xCA1E_5EED)
        let size: Double
        let area: Double
        let placed: [GeoPoint]
        let description: String
        switch scenario {
        case .city:
            size = cellSize ?? 500
            let box = CityBox(center: (48.8566, 2.3522), side: 40_000)
            placed = (0..<points).map { _ in box.random(using: &rng) }
            area = box.side * box.side
            description = "city: uniform over a 40 km x 40 km box around 48.8566, 2.3522"
        case .world, .worldCoarse:
            size = cellSize ?? (scenario == .world ? 500 : 20_000)
            placed = (0..<points).map { _ in Self.uniformOnSphere(using: &rng) }
            area = 4 * .pi * GeoPoint.earthRadius * GeoPoint.earthRadius
            description = "world: uniform over the whole sphere"
        }
        var positions = placed
        print("\n== \(description), cell size \(Int(size)) m ==")

        // Build, measuring heap bytes in use and resident memory around it.
        let heapBefore = Self.heapBytesInUse()
        let residentBefore = Self.residentBytes()
        var index = GridIndex(cellSize: size)
        let insertStart = Self.now()
        for (offset, point) in positions.enumerated() {
            index.upsert(Int64(offset), at: point)
        }
        let insertSeconds = Self.seconds(since: insertStart)
        let heapAfter = Self.heapBytesInUse()
        let residentBytes = Self.residentBytes() - residentBefore
        let stats = index.statistics
        let n = Double(points)
        print(
            "insert:  \(Self.fmt(n / insertSeconds / 1e6, 2)) M upserts/s "
                + "(\(Self.fmt(insertSeconds * 1e9 / n)) ns each)"
        )
        let heapText = heapBefore.flatMap { before in heapAfter.map { Self.fmt(Double($0 - before) / n, 1) } } ?? "n/a"
        print(
            "memory:  \(heapText) B/point heap in use (mallinfo2), "
                + "\(Self.fmt(Double(residentBytes) / n, 1)) B/point resident (statm delta"
                + (firstInProcess ? ")" : "; low: reuses pages freed by the previous scenario)"))
        print(
            "         index's own count: \(Self.fmt(Double(stats.totalBytes) / n, 1)) B/point = id table "
                + "\(Self.fmt(Double(stats.slotTableBytes) / n, 1)) + row directory "
                + "\(Self.fmt(Double(stats.directoryBytes) / n, 1))"
                + " + cells and entries \(Self.fmt(Double(stats.cellBytes) / n, 1)); \(stats.occupiedCells) cells, "
                + "\(Self.fmt(n / Double(stats.occupiedCells), 1)) points/cell, entry capacity "
                + "\(Self.fmt(Double(stats.entryCapacity) / n, 2))x points")

        // Moves: every point once, in random order, by 0-25 m (a phone's report every few seconds).
        var order = Array(0..<points)
        order.shuffle(using: &rng)
        let moved = order.map { Self.step(positions[$0], upTo: 25, using: &rng) }
        var crossCell = 0
        for (i, id) in order.enumerated() where index.cellKey(for: moved[i]) != index.cellKey(for: positions[id]) {
            crossCell += 1
        }
        let moveStart = Self.now()
        for (i, id) in order.enumerated() {
            index.upsert(Int64(id), at: moved[i])
        }
        let moveSeconds = Self.seconds(since: moveStart)
        for (i, id) in order.enumerated() { positions[id] = moved[i] }
        print(
            "move:    \(Self.fmt(n / moveSeconds / 1e6, 2)) M upserts/s (\(Self.fmt(moveSeconds * 1e9 / n)) ns each), "
                + "\(Self.fmt(Double(crossCell) * 100 / n, 1))% crossing cells")

        // Radius sized for ~target results: start from the density, then correct on sample queries.
        var radius = (target / (n / area) / .pi).squareRoot()
        for _ in 0..<4 {
            let sample = (0..<300).map { _ in positions[Int.random(in: 0..<points, using: &rng)] }
            var found = 0
            for center in sample { index.forEach(within: radius, of: center) { _, _, _ in found += 1 } }
            let mean = Double(found) / Double(sample.count)
            radius *= (target / max(mean, 1)).squareRoot()
        }

        // Timed rounds: index radius (forEach), index radius (query, allocating), index 20-nearest, brute force.
        var forEachMicros: [Double] = []
        var queryMicros: [Double] = []
        var nearestMicros: [Double] = []
        var bruteRadiusMicros: [Double] = []
        var bruteNearestMicros: [Double] = []
        var radiusRatios: [Double] = []
        var nearestRatios: [Double] = []
        var meanCount = 0.0
        var checked = 0
        var mismatches = 0
        var sink = 0
        for round in 0..<rounds {
            let centers = (0..<queries).map { _ in positions[Int.random(in: 0..<points, using: &rng)] }
            var found = 0
            var start = Self.now()
            for center in centers {
                index.forEach(within: radius, of: center) { id, _, _ in found &+= Int(id & 1) + 1 }
            }
            forEachMicros.append(Self.seconds(since: start) * 1e6 / Double(queries))
            if round == 0 {
                var count = 0
                for center in centers { index.forEach(within: radius, of: center) { _, _, _ in count += 1 } }
                meanCount = Double(count) / Double(queries)
            }
            sink &+= found

            start = Self.now()
            for center in centers { sink &+= index.query(within: radius, of: center).count }
            queryMicros.append(Self.seconds(since: start) * 1e6 / Double(queries))

            start = Self.now()
            for center in centers { sink &+= Int(index.nearest(20, to: center).last?.id ?? 0) }
            nearestMicros.append(Self.seconds(since: start) * 1e6 / Double(queries))

            let bruteCenters = Array(centers.prefix(bruteQueries))
            var bruteRadius: [[Int64]] = []
            start = Self.now()
            for center in bruteCenters { bruteRadius.append(Self.bruteRadius(positions, radius, center)) }
            let bruteRadiusTime = Self.seconds(since: start) * 1e6 / Double(bruteCenters.count)
            var bruteNearest: [[Int64]] = []
            start = Self.now()
            for center in bruteCenters { bruteNearest.append(Self.bruteNearest(positions, 20, center)) }
            let bruteNearestTime = Self.seconds(since: start) * 1e6 / Double(bruteCenters.count)
            bruteRadiusMicros.append(bruteRadiusTime)
            bruteNearestMicros.append(bruteNearestTime)
            radiusRatios.append(bruteRadiusTime / forEachMicros[round])
            nearestRatios.append(bruteNearestTime / nearestMicros[round])

            for (i, center) in bruteCenters.enumerated() {
                let byIndex = index.query(within: radius, of: center).map(\.id).sorted()
                let nearestByIndex = index.nearest(20, to: center).map(\.id)
                if byIndex != bruteRadius[i] || nearestByIndex != bruteNearest[i] { mismatches += 1 }
                checked += 1
            }
        }

        print("radius:  \(Self.fmt(radius, 1)) m, mean \(Self.fmt(meanCount, 1)) results")
        print("                         index µs/query   brute force µs/query   brute / index")
        print(
            "radius (forEach)         \(Self.pad(Self.fmt(Self.median(forEachMicros), 2), 14))   "
                + "\(Self.pad(Self.fmt(Self.median(bruteRadiusMicros), 0), 20))   "
                + "\(Self.fmt(Self.median(radiusRatios), 0))x"
        )
        print("radius (query, array)    \(Self.pad(Self.fmt(Self.median(queryMicros), 2), 14))")
        print(
            "20-nearest               \(Self.pad(Self.fmt(Self.median(nearestMicros), 2), 14))   "
                + "\(Self.pad(Self.fmt(Self.median(bruteNearestMicros), 0), 20))   "
                + "\(Self.fmt(Self.median(nearestRatios), 0))x"
        )
        print(
            "per round, radius forEach µs: \(forEachMicros.map { Self.fmt($0, 2) }.joined(separator: " ")); "
                + "20-nearest µs: \(nearestMicros.map { Self.fmt($0, 2) }.joined(separator: " "))")
        print(
            "verified: \(checked - mismatches) of \(checked) brute-force queries (radius set and 20-nearest list) "
                + "identical to the index" + (mismatches == 0 ? "" : "  *** \(mismatches) MISMATCHES ***"))
        if sink == 42 { print("") }  // keeps the timed work observable
    }

    // MARK: - Brute force

    private static func bruteRadius(_ points: [GeoPoint], _ radius: Double, _ center: GeoPoint) -> [Int64] {
        var found: [Int64] = []
        for (offset, point) in points.enumerated() where center.distance(to: point) <= radius {
            found.append(Int64(offset))
        }
        return found
    }

    /// The k nearest by (distance, id), keeping a small sorted array (k is 20).
    private static func bruteNearest(_ points: [GeoPoint], _ k: Int, _ center: GeoPoint) -> [Int64] {
        var best: [(distance: Double, id: Int64)] = []
        best.reserveCapacity(k + 1)
        for (offset, point) in points.enumerated() {
            let distance = center.distance(to: point)
            if best.count == k, let worst = best.last, distance >= worst.distance { continue }
            let candidate = (distance: distance, id: Int64(offset))
            var at = best.count
            while at > 0
                && (best[at - 1].distance > distance
                    || (best[at - 1].distance == distance && best[at - 1].id > candidate.id))
            {
                at -= 1
            }
            best.insert(candidate, at: at)
            if best.count > k { best.removeLast() }
        }
        return best.map(\.id)
    }

    // MARK: - Geography

    private struct CityBox {
        var center: (lat: Double, lon: Double)
        var side: Double

        func random(using rng: inout SplitMix64) -> GeoPoint {
            let metresPerDegree = GeoPoint.earthRadius * .pi / 180
            let latHalf = side / 2 / metresPerDegree
            let lonHalf = side / 2 / (metresPerDegree * cos(center.lat * .pi / 180))
            return GeoPoint(
                lat: center.lat + Double.random(in: -latHalf...latHalf, using: &rng),
                lon: center.lon + Double.random(in: -lonHalf...lonHalf, using: &rng))!
        }
    }

    private static func uniformOnSphere(using rng: inout SplitMix64) -> GeoPoint {
        GeoPoint(
            lat: asin(Double.random(in: -1...1, using: &rng)) * 180 / .pi,
            lon: Double.random(in: -180...180, using: &rng))!
    }

    /// `point` moved by up to `metres` in a random direction (flat approximation, fine at this scale).
    private static func step(_ point: GeoPoint, upTo metres: Double, using rng: inout SplitMix64) -> GeoPoint {
        let metresPerDegree = GeoPoint.earthRadius * .pi / 180
        let distance = Double.random(in: 0...metres, using: &rng)
        let bearing = Double.random(in: 0..<(2 * .pi), using: &rng)
        let lat = min(90, max(-90, point.lat + distance * cos(bearing) / metresPerDegree))
        var lon = point.lon + distance * sin(bearing) / (metresPerDegree * max(1e-6, cos(point.lat * .pi / 180)))
        if lon > 180 { lon -= 360 } else if lon < -180 { lon += 360 }
        return GeoPoint(lat: lat, lon: min(180, max(-180, lon)))!
    }

    // MARK: - Measurement helpers

    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    private static func seconds(since start: UInt64) -> Double {
        Double(now() - start) / 1e9
    }

    /// Bytes glibc's allocator has handed out and not had back: small blocks (uordblks) plus mmapped ones (hblkhd),
    /// from mallinfo2. malloc.h is not part of Swift's Glibc module, so the function is looked up by name and
    /// called as a C function returning `struct stat`: any C struct of 80 bytes or more is returned through
    /// caller-provided memory, so the ABI matches, and mallinfo2's ten size_t fields are read from its first
    /// 80 bytes. Returns nil where mallinfo2 is missing.
    static func heapBytesInUse() -> Int? {
        #if os(Linux) && canImport(Glibc)
        typealias MallinfoFunction = @convention(c) () -> stat
        guard MemoryLayout<stat>.size >= 10 * MemoryLayout<Int>.size,
            let symbol = dlsym(dlopen(nil, RTLD_NOW), "mallinfo2")
        else { return nil }
        let info = unsafeBitCast(symbol, to: MallinfoFunction.self)()
        return withUnsafeBytes(of: info) { raw in
            let hblkhd = raw.load(fromByteOffset: 4 * MemoryLayout<Int>.size, as: Int.self)
            let uordblks = raw.load(fromByteOffset: 7 * MemoryLayout<Int>.size, as: Int.self)
            return hblkhd + uordblks
        }
        #else
        return nil
        #endif
    }

    /// Resident set size from /proc/self/statm (second field, in pages).
    private static func residentBytes() -> Int {
        let fd = open("/proc/self/statm", O_RDONLY)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let length = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard length > 0 else { return 0 }
        let fields = buffer[..<length].split(separator: UInt8(ascii: " "))
        guard fields.count > 1, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    private static func fmt(_ value: Double, _ decimals: Int = 0) -> String {
        guard value.isFinite else { return "\(value)" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        if decimals == 0 { return String(Int(rounded)) }
        let whole = Int(rounded.rounded(.towardZero))
        let fraction = Int((abs(rounded - Double(whole)) * scale).rounded())
        var digits = String(fraction)
        while digits.count < decimals { digits = "0" + digits }
        return (rounded < 0 && whole == 0 ? "-" : "") + "\(whole).\(digits)"
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
