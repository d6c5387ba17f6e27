// Pages of pictures in SQLite: the part of the domain's `PictureStore` whose statements are tuned to SQLite's planner
// (posts, likes, reports, events and moderation are CairnSQL's).
//
// Nearby pages never scan the table. Each picture with a place carries its longitude strip (0.001° wide, about
// 73 m at 48°N) and the covering index `pictures_strip (strip, lat, lon, likes, created_at, hidden, private_event)`:
// a radius becomes one index seek per strip of its exact bounding box (`strip = ? AND lat BETWEEN ? AND ?`), which
// reads the rows of the box and little else.
//   distance: the radius grows from 50 m (by the shortfall's square root, at least ×1.5) until a page's worth of
//     visible pictures lies within it; every picture within r is in r's box, so the first ones within r are the
//     first ones overall.
//   likes / date: when the box holds at most `denseLimit` pictures (counted inside SQLite) they are ordered in
//     memory; otherwise the covering index of the order itself (`pictures_likes`, `pictures_date`) is walked from
//     the cursor, keeping the rows inside the circle, which finds a page after reading about page × (all / in box)
//     entries.
// What the viewer may see (`PictureViewer`) is read once per request: the private events joined and the pictures
// reported. Rows for the chosen ids are read last.
import CairnAdmin
public import CairnCore
public import CairnPictures
import CairnSQL
import Foundation
import GRDB

extension SQLiteStore: PictureStore {
    /// Above this many pictures in a radius's box, likes and date pages walk their order's index instead.
    static let denseLimit = 6_000

    private static let candidateColumns = "id, lat, lon, likes, created_at, hidden, private_event"

    /// A candidate from a row whose first columns are `candidateColumns`, read by position (the hot path of a page).
    private static func candidate(_ row: Row) -> PictureCandidate {
        let lat: Double? = row[1]
        let lon: Double? = row[2]
        let hidden: Int64 = row[5]
        return PictureCandidate(
            id: row[0], lat: lat, lon: lon, likes: row[3],
            createdAt: row[4], hidden: hidden != 0, privateEvent: row[6])
    }

    // MARK: Pages

    /// A page of pictures in order.
    public func pictures(_ query: PictureQuery) async throws -> [(record: PictureRecord, key: PictureKey)] {
        try await pool.read { db in
            let viewer = try Self.viewer(db, query.viewer)
            let chosen: [(candidate: PictureCandidate, key: PictureKey)]
            switch query.scope {
            case .event(let event):
                let all = try Row.fetchAll(
                    db, sql: "SELECT \(Self.candidateColumns) FROM pictures WHERE event_id = ?", arguments: [event]
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

    /// The private events `user` joined and the pictures they reported (CairnSQL's `SQLPictures.viewer`).
    static func viewer(_ db: Database, _ user: Int64) throws -> PictureViewer {
        try SQLPictures.viewer(SQLiteDatabase(db: db), user)
    }

    /// Full records of `ids` as `viewer` sees them (CairnSQL's `SQLPictures.records`).
    static func records(_ db: Database, ids: [Int64], viewer: Int64) throws -> [PictureRecord] {
        try SQLPictures.records(SQLiteDatabase(db: db), ids: ids, viewer: viewer)
    }

    // MARK: Nearby

    static let stripSQL = """
        SELECT \(candidateColumns) FROM pictures INDEXED BY pictures_strip
        WHERE strip = ? AND lat BETWEEN ? AND ? AND lon BETWEEN ? AND ?
        """
    static let stripRangeSQL = """
        SELECT \(candidateColumns) FROM pictures INDEXED BY pictures_strip
        WHERE strip BETWEEN ? AND ? AND lat BETWEEN ? AND ? AND lon BETWEEN ? AND ?
        """

    /// Every picture in a box.
    static func boxCandidates(_ db: Database, _ box: PictureArea) throws -> [PictureCandidate] {
        var found: [PictureCandidate] = []
        for strip in box.strips {
            let rows: RowCursor
            if let last = strip.last {
                rows = try Row.fetchCursor(
                    try db.cachedStatement(sql: stripRangeSQL),
                    arguments: [strip.first, last, box.latMin, box.latMax, strip.lonMin, strip.lonMax])
            } else {
                rows = try Row.fetchCursor(
                    try db.cachedStatement(sql: stripSQL),
                    arguments: [strip.first, box.latMin, box.latMax, strip.lonMin, strip.lonMax])
            }
            while let row = try rows.next() { found.append(candidate(row)) }
        }
        return found
    }

    static let stripCountSQL = """
        SELECT count(*) FROM (
          SELECT 1 FROM pictures INDEXED BY pictures_strip
          WHERE strip = ? AND lat BETWEEN ? AND ? AND lon BETWEEN ? AND ? LIMIT ?)
        """
    static let stripRangeCountSQL = """
        SELECT count(*) FROM (
          SELECT 1 FROM pictures INDEXED BY pictures_strip
          WHERE strip BETWEEN ? AND ? AND lat BETWEEN ? AND ? AND lon BETWEEN ? AND ? LIMIT ?)
        """

    /// Whether a box holds more than `limit` pictures, counted inside SQLite without reading the rows out.
    static func boxHoldsMore(_ db: Database, _ box: PictureArea, than limit: Int) throws -> Bool {
        var seen = 0
        for strip in box.strips {
            let left = limit + 1 - seen
            if let last = strip.last {
                seen +=
                    try Int.fetchOne(
                        try db.cachedStatement(sql: stripRangeCountSQL),
                        arguments: [strip.first, last, box.latMin, box.latMax, strip.lonMin, strip.lonMax, left]) ?? 0
            } else {
                seen +=
                    try Int.fetchOne(
                        try db.cachedStatement(sql: stripCountSQL),
                        arguments: [strip.first, box.latMin, box.latMax, strip.lonMin, strip.lonMax, left]) ?? 0
            }
            if seen > limit { return true }
        }
        return false
    }

    /// The walk of an order's own index from the cursor, keeping the rows inside the box (dense areas).
    static func walkSQL(_ sort: PictureSort, lon: String) -> String {
        let (index, column) = sort == .likes ? ("pictures_likes", "likes") : ("pictures_date", "created_at")
        return """
            SELECT \(candidateColumns) FROM pictures INDEXED BY \(index)
            WHERE (\(column), id) < (?, ?) AND lat BETWEEN ? AND ? AND \(lon)
            ORDER BY \(column) DESC, id DESC LIMIT ?
            """
    }

    static func nearby(_ db: Database, _ query: PictureQuery, radius: Double, viewer: PictureViewer) throws
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
        let statement = try db.cachedStatement(sql: walkSQL(order.sort, lon: lon))
        var from = query.after.map { (-$0.rank, $0.id) } ?? (Int64.max, Int64.max)
        var page: [(candidate: PictureCandidate, key: PictureKey)] = []
        let chunk = 512
        while page.count < query.limit {
            var arguments: [(any DatabaseValueConvertible)?] = [from.0, from.1, box.latMin, box.latMax]
            arguments += lonArguments.map { $0 }
            arguments.append(chunk)
            let rows = try Row.fetchAll(statement, arguments: StatementArguments(arguments))
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

    /// The query plans of a nearby page's statements (the benchmark prints them).
    public func explainPictureQueries() throws -> [(String, [String])] {
        try pool.read { db in
            var plans: [(String, [String])] = []
            for (name, sql, count) in [
                ("nearby strip (distance; likes or date when sparse)", Self.stripSQL, 5),
                ("nearby strip count (sparse or dense?)", Self.stripCountSQL, 6),
                ("near a pole: a range of strips", Self.stripRangeSQL, 6),
                ("nearby walk by likes (dense)", Self.walkSQL(.likes, lon: "lon BETWEEN ? AND ?"), 7),
                ("nearby walk by date (dense)", Self.walkSQL(.date, lon: "lon BETWEEN ? AND ?"), 7),
            ] {
                let rows = try Row.fetchAll(
                    db, sql: "EXPLAIN QUERY PLAN " + sql,
                    arguments: StatementArguments(Array(repeating: 0, count: count)))
                plans.append((name, rows.map { $0["detail"] as String }))
            }
            return plans
        }
    }
}
