// Pages of pictures in the shared store: the part of the domain's `PictureStore` whose statements are tuned to
// PostgreSQL's planner (posts, likes, reports, events and moderation are CairnSQL's).
//
// Nearby pages never scan the table, with the same plan as SQLite's but one round trip per step: the strips of a
// radius's box go as arrays and are joined to `pictures_strip (strip, lat, lon, ...) INCLUDE (id)`, one index seek
// per strip (`strip = s.strip AND lat BETWEEN ? AND ?`), instead of one statement per strip.
//   distance: the radius grows from 50 m until a page's worth of visible pictures lies within it.
//   likes / date: when the box holds at most `denseLimit` pictures (counted in the database) they are ordered in
//     memory; otherwise the order's own index (`pictures_likes`, `pictures_date`) is walked backwards from the
//     cursor (`(likes, id) < (?, ?)`), keeping the rows inside the circle.
// Every order and page is `PictureOrder`'s (ties broken by id, the highest first), so both stores page alike; the
// keyset columns are NOT NULL, so no NULL ordering enters the walks.
import CairnAdmin
public import CairnCore
public import CairnPictures
import CairnSQL
import Foundation

extension PostgresStore: PictureStore {
    /// Above this many pictures in a radius's box, likes and date pages walk their order's index instead.
    static let denseLimit = 6_000

    private static let candidateColumns = "id, lat, lon, likes, created_at, hidden, private_event"

    /// A candidate from a row whose first columns are `candidateColumns`, read by position.
    private static func candidate(_ row: PostgresRow) -> PictureCandidate {
        let lat: Double? = row[1]
        let lon: Double? = row[2]
        let hidden: Int64 = row[5]
        return PictureCandidate(
            id: row[0], lat: lat, lon: lon, likes: row[3], createdAt: row[4], hidden: hidden != 0,
            privateEvent: row[6])
    }

    // MARK: Pages

    /// A page of pictures in order.
    public func pictures(_ query: PictureQuery) async throws -> [(record: PictureRecord, key: PictureKey)] {
        try await pool.read { db in
            let viewer = try Self.viewer(db, query.viewer)
            let chosen: [(candidate: PictureCandidate, key: PictureKey)]
            switch query.scope {
            case .event(let event):
                let all = try db.rows(
                    "SELECT \(Self.candidateColumns) FROM pictures WHERE event_id = ?", [event]
                ).map(Self.candidate)
                chosen = query.order.page(all, viewer: viewer, after: query.after, radius: nil, limit: query.limit)
            case .nearby(let radius):
                chosen = try Self.nearby(db, query, radius: radius, viewer: viewer)
            }
            let records = try Self.records(db, ids: chosen.map(\.candidate.id), viewer: query.viewer)
            let byID = Dictionary(records.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            return chosen.compactMap { c in byID[c.candidate.id].map { ($0, c.key) } }
        }
    }

    // MARK: Nearby

    /// The strips of a box as a join source: one row per strip seek (`strips`), or per range of strips near the
    /// poles (`ranges`), each with its longitude bounds, then `lat BETWEEN ? AND ?`.
    static func stripJoin(ranges: Bool) -> String {
        ranges
            ? """
            unnest(?::bigint[], ?::bigint[], ?::float8[], ?::float8[]) AS s(first, last, lon_min, lon_max)
            JOIN pictures p ON p.strip BETWEEN s.first AND s.last
            """
            : """
            unnest(?::bigint[], ?::float8[], ?::float8[]) AS s(strip, lon_min, lon_max)
            JOIN pictures p ON p.strip = s.strip
            """
    }

    static let boxCondition = "p.lat BETWEEN ? AND ? AND p.lon BETWEEN s.lon_min AND s.lon_max"

    /// The statement reading every candidate in a box.
    static func stripSQL(ranges: Bool) -> String {
        """
        SELECT p.id, p.lat, p.lon, p.likes, p.created_at, p.hidden, p.private_event
        FROM \(stripJoin(ranges: ranges)) AND \(boxCondition)
        """
    }

    /// The statement counting a box's pictures up to a limit, inside the database.
    static func stripCountSQL(ranges: Bool) -> String {
        "SELECT count(*) FROM (SELECT 1 FROM \(stripJoin(ranges: ranges)) AND \(boxCondition) LIMIT ?) AS box"
    }

    /// The box's strip arrays and latitude bounds, in the order `stripSQL` binds them.
    static func boxArguments(_ box: PictureArea) -> (ranges: Bool, arguments: PostgresArguments) {
        let strips = box.strips
        let ranges = strips.contains { $0.last != nil }
        var arguments = PostgresArguments()
        arguments.append(PostgresIntArray(strips.map(\.first)))
        if ranges { arguments.append(PostgresIntArray(strips.map { $0.last ?? $0.first })) }
        arguments.append(PostgresArray(strips.map { Optional($0.lonMin) }))
        arguments.append(PostgresArray(strips.map { Optional($0.lonMax) }))
        arguments.append(box.latMin)
        arguments.append(box.latMax)
        return (ranges, arguments)
    }

    /// Every picture in a box, in one statement.
    static func boxCandidates(_ db: PostgresConnection, _ box: PictureArea) throws -> [PictureCandidate] {
        let (ranges, arguments) = boxArguments(box)
        return try db.rows(stripSQL(ranges: ranges), arguments).map(candidate)
    }

    /// Whether a box holds more than `limit` pictures, counted in the database without reading the rows out.
    static func boxHoldsMore(_ db: PostgresConnection, _ box: PictureArea, than limit: Int) throws -> Bool {
        var (ranges, arguments) = boxArguments(box)
        arguments.append(limit + 1)
        return try db.scalar(stripCountSQL(ranges: ranges), arguments, as: Int.self) ?? 0 > limit
    }

    /// The walk of an order's own index from the cursor, keeping the rows inside the box (dense areas).
    static func walkSQL(_ sort: PictureSort, lon: String) -> String {
        let column = sort == .likes ? "likes" : "created_at"
        return """
            SELECT \(candidateColumns) FROM pictures
            WHERE (\(column), id) < (?, ?) AND lat BETWEEN ? AND ? AND \(lon)
            ORDER BY \(column) DESC, id DESC LIMIT ?
            """
    }

    static func nearby(_ db: PostgresConnection, _ query: PictureQuery, radius: Double, viewer: PictureViewer) throws
        -> [(candidate: PictureCandidate, key: PictureKey)]
    {
        guard let origin = query.order.origin else { return [] }
        let order = query.order
        if order.sort == .distance {
            return try query.pageByDistance(around: origin, within: radius, viewer: viewer) { area in
                try boxCandidates(db, area)
            }
        }
        let box = PictureArea(around: origin, radius: radius)
        if try !boxHoldsMore(db, box, than: denseLimit) {
            let all = try boxCandidates(db, box)
            return order.page(all, viewer: viewer, after: query.after, radius: radius, limit: query.limit)
        }
        // Dense: walk the order's index from the cursor.
        let (lon, lonArguments) = box.lonCondition
        let sql = walkSQL(order.sort, lon: lon)
        var from = query.after.map { (-$0.rank, $0.id) } ?? (Int64.max, Int64.max)
        var page: [(candidate: PictureCandidate, key: PictureKey)] = []
        let chunk = 512
        while page.count < query.limit {
            var arguments: PostgresArguments = [from.0, from.1, box.latMin, box.latMax]
            for value in lonArguments { arguments.append(value) }
            arguments.append(chunk)
            let rows = try db.rows(sql, arguments)
            for row in rows {
                let candidate = candidate(row)
                from = (order.sort == .likes ? candidate.likes : candidate.createdAt, candidate.id)
                guard viewer.sees(candidate), order.distance(to: candidate.point) <= radius else { continue }
                page.append((candidate, order.key(candidate)))
                if page.count == query.limit { break }
            }
            if rows.count < chunk { break }
        }
        return page
    }

    /// The query plans of a nearby page's statements around `order`'s origin (what the planner makes of them with
    /// the table's current statistics; each should use an index, never scan the table).
    public func explainPictureQueries(_ order: PictureOrder, radius: Double) async throws -> [(String, [String])] {
        guard let origin = order.origin else { return [] }
        return try await pool.read { db in
            let box = PictureArea(around: origin, radius: radius)
            let (ranges, arguments) = Self.boxArguments(box)
            var counted = arguments
            counted.append(Self.denseLimit + 1)
            let (lon, lonArguments) = box.lonCondition
            var walk: PostgresArguments = [Int64.max, Int64.max, box.latMin, box.latMax]
            for value in lonArguments { walk.append(value) }
            walk.append(512)
            var plans: [(String, [String])] = []
            for (name, sql, values) in [
                ("nearby strips (distance; likes or date when sparse)", Self.stripSQL(ranges: ranges), arguments),
                ("nearby strip count (sparse or dense?)", Self.stripCountSQL(ranges: ranges), counted),
                ("nearby walk by likes (dense)", Self.walkSQL(.likes, lon: lon), walk),
                ("nearby walk by date (dense)", Self.walkSQL(.date, lon: lon), walk),
            ] {
                plans.append((name, try db.scalars("EXPLAIN " + sql, values, as: String.self)))
            }
            return plans
        }
    }

    /// The private events `user` joined and the pictures they reported (CairnSQL's `SQLPictures.viewer`).
    static func viewer(_ db: PostgresConnection, _ user: Int64) throws -> PictureViewer {
        try SQLPictures.viewer(PostgresDatabase(db: db), user)
    }

    /// Full records of `ids` as `viewer` sees them (CairnSQL's `SQLPictures.records`).
    static func records(_ db: PostgresConnection, ids: [Int64], viewer: Int64) throws -> [PictureRecord] {
        try SQLPictures.records(PostgresDatabase(db: db), ids: ids, viewer: viewer)
    }
}
