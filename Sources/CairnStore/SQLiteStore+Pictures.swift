// Pictures in SQLite: their part of the domain's `PictureStore` (events and moderation are CairnSQL's). A post
// checks in its own transaction that the media is an image upload of the poster, that the poster is under the hourly
// limit and may post to the event (creating a missing one), so nothing is half-applied.
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
import CairnDomain
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

    // MARK: Writes

    /// Stores a picture after checking its media, the poster's hourly limit and the event.
    public func postPicture(_ picture: NewPicture) async throws -> PostedPicture {
        try await pool.write { db in
            guard
                let type = try String.fetchOne(
                    db, sql: "SELECT content_type FROM media WHERE id = ? AND owner_id = ?",
                    arguments: [picture.mediaID, picture.by])
            else { throw PictureStoreError.mediaNotFound }
            guard ["image/jpeg", "image/png", "image/webp"].contains(type) else {
                throw PictureStoreError.notAnImage(contentType: type)
            }
            // The hourly limit counts posts, deleted pictures' among them (`picture_posts`).
            let hourAgo = picture.createdAt - 3_600_000
            try db.execute(
                sql: "DELETE FROM picture_posts WHERE user_id = ? AND at <= ?", arguments: [picture.by, hourAgo])
            let recent =
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM picture_posts WHERE user_id = ? AND at > ?",
                    arguments: [picture.by, hourAgo]) ?? 0
            guard recent < picture.postsPerHour else {
                throw PictureStoreError.rateLimited(limit: picture.postsPerHour)
            }
            try db.execute(
                sql: "INSERT INTO picture_posts (user_id, at) VALUES (?, ?)",
                arguments: [picture.by, picture.createdAt])
            var eventID: Int64?
            var privateEvent: Int64?
            var members: Set<Int64>?
            if let tag = picture.eventTag {
                if let row = try Row.fetchOne(
                    db, sql: "SELECT id, password_hash IS NOT NULL AS private FROM events WHERE tag = ?",
                    arguments: [tag])
                {
                    let id: Int64 = row["id"]
                    eventID = id
                    if row["private"] as Bool {
                        let joined = try Set(
                            Int64.fetchAll(
                                db, sql: "SELECT user_id FROM event_members WHERE event_id = ?", arguments: [id]))
                        guard joined.contains(picture.by) else { throw PictureStoreError.notMember }
                        privateEvent = id
                        members = joined
                    }
                } else {
                    try db.execute(
                        sql: "INSERT INTO events (tag, owner_id, created_at) VALUES (?, ?, ?)",
                        arguments: [tag, picture.by, picture.createdAt])
                    let id = db.lastInsertedRowID
                    try db.execute(
                        sql: "INSERT INTO event_members (event_id, user_id, joined_at) VALUES (?, ?, ?)",
                        arguments: [id, picture.by, picture.createdAt])
                    eventID = id
                }
            }
            try db.execute(
                sql: """
                    INSERT INTO pictures
                      (by_id, media_id, caption, event_id, private_event, lat, lon, strip, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    picture.by, picture.mediaID, picture.caption, eventID, privateEvent, picture.point?.lat,
                    picture.point?.lon, picture.point.map { PictureArea.strip(lon: $0.lon) }, picture.createdAt,
                ])
            let id = db.lastInsertedRowID
            guard let record = try Self.records(db, ids: [id], viewer: picture.by).first else {
                throw PictureStoreError.mediaNotFound
            }
            return PostedPicture(record: record, members: members)
        }
    }

    /// Likes or unlikes; answers the likes.
    public func setLike(picture: Int64, user: Int64, liked: Bool, at: Int64) async throws -> Int64 {
        try await pool.write { db in
            if liked {
                try db.execute(
                    sql: "INSERT OR IGNORE INTO picture_likes (picture_id, user_id, created_at) VALUES (?, ?, ?)",
                    arguments: [picture, user, at])
                if db.changesCount > 0 {
                    try db.execute(sql: "UPDATE pictures SET likes = likes + 1 WHERE id = ?", arguments: [picture])
                }
            } else {
                try db.execute(
                    sql: "DELETE FROM picture_likes WHERE picture_id = ? AND user_id = ?", arguments: [picture, user])
                if db.changesCount > 0 {
                    try db.execute(sql: "UPDATE pictures SET likes = likes - 1 WHERE id = ?", arguments: [picture])
                }
            }
            return try Int64.fetchOne(db, sql: "SELECT likes FROM pictures WHERE id = ?", arguments: [picture]) ?? 0
        }
    }

    /// Deletes a picture (its likes and reports go with it).
    public func deletePicture(id: Int64) async throws -> Bool {
        try await pool.write { db in
            // Only reports that count toward hiding hold a picture for review: a guest's report does not.
            let open = "SELECT 1 FROM picture_reports WHERE picture_id = ? AND state = 'open' AND reporter_guest = 0"
            if try Bool.fetchOne(db, sql: "SELECT EXISTS (\(open))", arguments: [id]) == true {
                throw PictureStoreError.underReview
            }
            try db.execute(sql: "DELETE FROM pictures WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    /// Stores a report and hides the picture once enough distinct non-guests reported it.
    public func report(_ report: NewReport) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO picture_reports
                      (picture_id, reporter_id, reporter_guest, reason, text, created_at)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    report.picture, report.reporter.id, report.reporter.isGuest, report.reason.rawValue, report.text,
                    report.at,
                ])
            let reporters =
                try Int.fetchOne(
                    db,
                    sql: """
                        SELECT count(DISTINCT reporter_id) FROM picture_reports
                        WHERE picture_id = ? AND state = 'open' AND reporter_guest = 0
                        """, arguments: [report.picture]) ?? 0
            if reporters >= report.threshold {
                try db.execute(
                    sql: "UPDATE pictures SET hidden = 1 WHERE id = ? AND hidden = 0", arguments: [report.picture])
            }
            return try Bool.fetchOne(db, sql: "SELECT hidden FROM pictures WHERE id = ?", arguments: [report.picture])
                ?? false
        }
    }

    // MARK: Reads

    /// One picture as `viewer` may reach it.
    public func picture(id: Int64, viewer: Int64) async throws -> PictureAccess? {
        try await pool.read { db in
            guard let record = try Self.records(db, ids: [id], viewer: viewer).first else { return nil }
            let reported =
                try Bool.fetchOne(
                    db, sql: "SELECT EXISTS(SELECT 1 FROM picture_reports WHERE picture_id = ? AND reporter_id = ?)",
                    arguments: [id, viewer]) ?? false
            var member = true
            if let event = record.event, event.isPrivate {
                member =
                    try Bool.fetchOne(
                        db, sql: "SELECT EXISTS(SELECT 1 FROM event_members WHERE event_id = ? AND user_id = ?)",
                        arguments: [event.id, viewer]) ?? false
            }
            return PictureAccess(record: record, reportedByViewer: reported, member: member)
        }
    }

    /// A picture as its post announced it, with a private event's members now.
    public func postedPicture(id: Int64) async throws -> PostedPicture? {
        try await pool.read { db in
            guard let by = try Int64.fetchOne(db, sql: "SELECT by_id FROM pictures WHERE id = ?", arguments: [id]),
                let record = try Self.records(db, ids: [id], viewer: by).first
            else { return nil }
            var members: Set<Int64>?
            if let event = record.event, event.isPrivate {
                members = Set(
                    try Int64.fetchAll(
                        db, sql: "SELECT user_id FROM event_members WHERE event_id = ?", arguments: [event.id]))
            }
            return PostedPicture(record: record, members: members)
        }
    }

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

    /// The newest pictures the viewer sees matching every word and tag.
    public func searchPictures(words: [String], tags: [String], viewer: Int64, limit: Int) async throws
        -> [PictureRecord]
    {
        try await pool.read { db in
            let seer = try Self.viewer(db, viewer)
            var conditions: [String] = []
            var arguments: [(any DatabaseValueConvertible)?] = []
            // LIKE ignores case for ASCII letters only: it narrows the rows by ASCII words, and every word is
            // checked again below on the lower-cased caption.
            for word in words where word.utf8.allSatisfy({ $0 < 0x80 }) {
                conditions.append(#"p.caption LIKE ? ESCAPE '\'"#)
                arguments.append("%\(Self.escapeLike(word))%")
            }
            for tag in tags where tag.utf8.allSatisfy({ $0 < 0x80 }) {
                conditions.append(#"(e.tag = ? OR p.caption LIKE ? ESCAPE '\')"#)
                arguments.append(tag)
                arguments.append("%#\(Self.escapeLike(tag))%")
            }
            let filter = conditions.isEmpty ? "1" : conditions.joined(separator: " AND ")
            var found: [Int64] = []
            var before: (Int64, Int64) = (.max, .max)
            // Newest first, in chunks, until a page of visible matches (a hashtag must be a whole word).
            while found.count < limit {
                let rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT p.id, p.lat, p.lon, p.likes, p.created_at, p.hidden, p.private_event, p.caption, e.tag
                        FROM pictures p LEFT JOIN events e ON e.id = p.event_id
                        WHERE (p.created_at, p.id) < (?, ?) AND \(filter)
                        ORDER BY p.created_at DESC, p.id DESC LIMIT 500
                        """, arguments: StatementArguments([before.0, before.1] + arguments))
                for row in rows {
                    let candidate = Self.candidate(row)
                    before = (candidate.createdAt, candidate.id)
                    guard seer.sees(candidate) else { continue }
                    guard
                        EventTag.matches(caption: row["caption"], eventTag: row["tag"], words: words, tags: tags)
                    else { continue }
                    found.append(candidate.id)
                    if found.count == limit { break }
                }
                if rows.count < 500 { break }
            }
            let records = try Self.records(db, ids: found, viewer: viewer)
            let byID = Dictionary(records.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            return found.compactMap { byID[$0] }
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
