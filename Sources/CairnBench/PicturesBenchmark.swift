// The pictures benchmark (`cairn-bench pictures`): N pictures (a million by default) stored in SQLite over one
// city (about 12 × 10 km, denser towards the centre), then `picture.nearby` pages of 50 timed through the store
// exactly as the hub asks for them (`SQLiteStore.pictures`, 51 rows to know whether a next page exists), sorted by
// distance, likes and date, at several radii, first pages and the page after. It prints the query plans first
// (`EXPLAIN QUERY PLAN`: each statement must search an index, never scan the table). A share of the answers is
// checked against a brute-force ordering of every picture in memory (`PictureOrder.page`), so the figures are of
// exact pages. 2 % of the pictures belong to a private event the viewer has not joined, 1 % are hidden.
import CairnCore
import CairnGeo
import CairnPictures
import CairnSeed
import CairnSessions
import CairnStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

let picturesBenchmarkUsage = """
    usage: cairn-bench pictures [--pictures N] [--queries N] [--check N] [--seed S]
      Stores --pictures (1,000,000) pictures over one city, then times --queries (200) nearby pages of 50 per sort
      (distance, likes, date) and radius (250 m, 1 km, 5 km): the first page and the next one. --check (10) pages
      per combination are compared with a brute-force ordering of all pictures.
    """

/// `cairn-bench pictures`: see the file comment.
func runPicturesBenchmark(arguments: [String]) throws {
    var count = 1_000_000
    var queries = 200
    var check = 10
    var seed: UInt64 = 21
    var i = 0
    while i < arguments.count {
        guard i + 1 < arguments.count else { throw BenchOptionError("\(arguments[i]) needs a value") }
        let value = arguments[i + 1]
        guard let n = Int(value), n > 0 else { throw BenchOptionError("\(arguments[i]) must be a positive integer") }
        switch arguments[i] {
        case "--pictures": count = n
        case "--queries": queries = n
        case "--check": check = n
        case "--seed": seed = UInt64(n)
        default: throw BenchOptionError("unknown option \(arguments[i])\n\(picturesBenchmarkUsage)")
        }
        i += 2
    }
    let dir = NSTemporaryDirectory() + "cairn-bench-pictures-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try SQLiteStore(directory: dir)
    let users = try blocking {
        try await store.insertFixtures(
            users: (0..<1_000).map {
                FixtureUser(username: "u\($0)", name: "U \($0)", tokenHash: [UInt8]("\($0)".utf8))
            },
            friendships: [], createdAt: 0)
    }
    let event = try blocking { try await store.insertFixtureEvent(tag: "secret", owner: users[0]) }
    let viewer = users[1]
    // The city: centre 48.857, 2.345; a picture is at a normally distributed distance (σ 3 km) in a random direction,
    // clipped to ±6 km north-south and ±5 km east-west, so the centre is denser than the edges.
    let centre = GeoPoint(lat: 48.857, lon: 2.345)!
    var rng = SplitMix64(seed: seed)
    func gaussian() -> Double {
        let u = Double.random(in: Double.ulpOfOne..<1, using: &rng)
        let v = Double.random(in: 0..<1, using: &rng)
        return (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
    }
    func place(north: Double, east: Double) -> GeoPoint {
        let lat = centre.lat + north / 111_195
        return GeoPoint(lat: lat, lon: centre.lon + east / (111_195 * cos(centre.lat * .pi / 180)))!
    }
    func cityPoint() -> GeoPoint {
        place(north: max(-6_000, min(6_000, gaussian() * 3_000)), east: max(-5_000, min(5_000, gaussian() * 3_000)))
    }
    print("pictures: storing \(count) pictures over the city...")
    let loadStart = Date()
    var all: [PictureCandidate] = []
    all.reserveCapacity(count)
    let batch = 50_000
    var created: Int64 = 1_700_000_000_000
    var nextID: Int64 = 1
    while all.count < count {
        var rows: [FixturePicture] = []
        for _ in 0..<min(batch, count - all.count) {
            let point = cityPoint()
            // Likes: most pictures have few, a few have many.
            let likes = Int64(pow(Double.random(in: 0..<1, using: &rng), 6) * 500)
            created += Int64.random(in: 0...2_000, using: &rng)
            let inEvent = Int.random(in: 0..<100, using: &rng) < 2 ? event : nil
            let hidden = Int.random(in: 0..<100, using: &rng) == 0
            rows.append(
                FixturePicture(
                    by: users[Int.random(in: 0..<users.count, using: &rng)], lat: point.lat, lon: point.lon,
                    likes: likes,
                    createdAt: created, privateEvent: inEvent))
            all.append(
                PictureCandidate(
                    id: nextID, point: point, likes: likes, createdAt: created, hidden: hidden, privateEvent: inEvent))
            nextID += 1
        }
        let batchRows = rows
        try blocking { try await store.insertFixturePictures(batchRows) }
    }
    let hiddenIDs = all.filter(\.hidden).map(\.id)
    try blocking { try await store.hideFixturePictures(hiddenIDs) }
    print("pictures: stored in \(String(format: "%.1f", Date().timeIntervalSince(loadStart))) s")
    print("\nquery plans (EXPLAIN QUERY PLAN):")
    for (name, details) in try store.explainPictureQueries() {
        print("  \(name):")
        for line in details { print("    \(line)") }
    }
    let seer = PictureViewer(user: viewer, joined: [], reported: [])
    print("\npage of 50 (51 rows asked), milliseconds per page:")
    print("  sort      radius   page   median      p90      p99      max   mean rows   checked")
    for sort in [PictureSort.distance, .likes, .date] {
        for radius in [250.0, 1_000, 5_000] {
            var firstTimes: [Double] = []
            var nextTimes: [Double] = []
            var rowsSeen = 0
            var checked = 0
            for q in 0..<queries {
                let origin = cityPoint()
                let order = PictureOrder(sort: sort, origin: origin)
                let query = PictureQuery(
                    viewer: viewer, scope: .nearby(radius: radius), order: order, after: nil, limit: 51)
                let (first, t1) = try timed { try blocking { try await store.pictures(query) } }
                firstTimes.append(t1)
                rowsSeen += first.count
                var second: [(record: PictureRecord, key: PictureKey)] = []
                if first.count == 51 {
                    var next = query
                    next.after = first[49].key
                    let nextQuery = next
                    let (page, t2) = try timed { try blocking { try await store.pictures(nextQuery) } }
                    second = page
                    nextTimes.append(t2)
                }
                if q < check {
                    let want = order.page(all, viewer: seer, after: nil, radius: radius, limit: 51).map(\.candidate.id)
                    guard first.map(\.record.id) == want else {
                        throw BenchOptionError("page differs from brute force: \(sort) \(radius) m at \(origin)")
                    }
                    if first.count == 51 {
                        let after = order.page(all, viewer: seer, after: first[49].key, radius: radius, limit: 51)
                        guard second.map(\.record.id) == after.map(\.candidate.id) else {
                            throw BenchOptionError("next page differs from brute force: \(sort) \(radius) m")
                        }
                    }
                    checked += 1
                }
            }
            for (name, times) in [("first", firstTimes), ("next", nextTimes)] where !times.isEmpty {
                let s = times.sorted()
                func at(_ p: Double) -> Double { s[min(s.count - 1, Int(Double(s.count) * p))] }
                print(
                    "  " + pad(sort.rawValue, 8) + pad("\(Int(radius)) m", 9, right: true) + pad(name, 7, right: true)
                        + ms(at(0.5)) + ms(at(0.9)) + ms(at(0.99)) + ms(s.last!)
                        + pad(name == "first" ? "\(rowsSeen / max(1, queries))" : "", 12, right: true)
                        + pad(name == "first" ? "\(checked)" : "", 10, right: true))
            }
        }
    }
}

private func timed<T>(_ body: () throws -> T) rethrows -> (T, Double) {
    var start = timespec()
    clock_gettime(CLOCK_MONOTONIC, &start)
    let value = try body()
    var end = timespec()
    clock_gettime(CLOCK_MONOTONIC, &end)
    return (value, Double(end.tv_sec - start.tv_sec) * 1e3 + Double(end.tv_nsec - start.tv_nsec) / 1e6)
}

private func ms(_ value: Double) -> String { pad(String(format: "%.2f", value), 9, right: true) }

private func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
    let fill = String(repeating: " ", count: max(0, width - text.count))
    return right ? fill + text : text + fill
}
