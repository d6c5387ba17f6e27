// Pictures' posts, likes, reports and single reads, implementing their part of the domain's `PictureStore` (pages of
// pictures are each engine's own: their statements are tuned to each engine's planner). A post checks in its own
// transaction that the media is an image upload of the poster, that the poster is under the hourly limit and may post
// to the event (creating a missing one), so nothing is half-applied; on PostgreSQL SERIALIZABLE makes the limit and a
// new event's tag hold across nodes (a colliding transaction is run again).
public import CairnCore
import CairnGeo
public import CairnPictures

extension SQLStore {
    // MARK: Writes

    /// Stores a picture after checking its media, the poster's hourly limit and the event.
    public func postPicture(_ picture: NewPicture) async throws -> PostedPicture {
        try await database.write { db in
            guard
                let type = try db.scalar(
                    "SELECT content_type FROM media WHERE id = ? AND owner_id = ?", [picture.mediaID, picture.by],
                    as: String.self)
            else { throw PictureStoreError.mediaNotFound }
            guard ["image/jpeg", "image/png", "image/webp"].contains(type) else {
                throw PictureStoreError.notAnImage(contentType: type)
            }
            // The hourly limit counts posts, deleted pictures' among them (`picture_posts`).
            let hourAgo = picture.createdAt - 3_600_000
            try db.execute("DELETE FROM picture_posts WHERE user_id = ? AND at <= ?", [picture.by, hourAgo])
            let recent =
                try db.scalar(
                    "SELECT count(*) FROM picture_posts WHERE user_id = ? AND at > ?", [picture.by, hourAgo],
                    as: Int.self) ?? 0
            guard recent < picture.postsPerHour else {
                throw PictureStoreError.rateLimited(limit: picture.postsPerHour)
            }
            try db.execute("INSERT INTO picture_posts (user_id, at) VALUES (?, ?)", [picture.by, picture.createdAt])
            var eventID: Int64?
            var privateEvent: Int64?
            var members: Set<Int64>?
            if let tag = picture.eventTag {
                if let row = try db.row(
                    "SELECT id, password_hash IS NOT NULL AS private FROM events WHERE tag = ?", [tag])
                {
                    let id: Int64 = row["id"]
                    eventID = id
                    if row["private"] as Bool {
                        let joined = Set(
                            try db.scalars(
                                "SELECT user_id FROM event_members WHERE event_id = ?", [id], as: Int64.self))
                        guard joined.contains(picture.by) else { throw PictureStoreError.notMember }
                        privateEvent = id
                        members = joined
                    }
                } else {
                    let id = try db.scalar(
                        "INSERT INTO events (tag, owner_id, created_at) VALUES (?, ?, ?) RETURNING id",
                        [tag, picture.by, picture.createdAt], as: Int64.self)!
                    try db.execute(
                        "INSERT INTO event_members (event_id, user_id, joined_at) VALUES (?, ?, ?)",
                        [id, picture.by, picture.createdAt])
                    eventID = id
                }
            }
            let id = try db.scalar(
                """
                INSERT INTO pictures (by_id, media_id, caption, event_id, private_event, lat, lon, strip, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
                """,
                [
                    picture.by, picture.mediaID, picture.caption, eventID, privateEvent, picture.point?.lat,
                    picture.point?.lon, picture.point.map { PictureArea.strip(lon: $0.lon) }, picture.createdAt,
                ], as: Int64.self)!
            guard let record = try SQLPictures.records(db, ids: [id], viewer: picture.by).first else {
                throw PictureStoreError.mediaNotFound
            }
            return PostedPicture(record: record, members: members)
        }
    }

    /// Likes or unlikes; answers the likes.
    public func setLike(picture: Int64, user: Int64, liked: Bool, at: Int64) async throws -> Int64 {
        try await database.write { db in
            if liked {
                let added = try db.execute(
                    """
                    INSERT INTO picture_likes (picture_id, user_id, created_at) VALUES (?, ?, ?)
                    ON CONFLICT DO NOTHING
                    """, [picture, user, at])
                if added > 0 { try db.execute("UPDATE pictures SET likes = likes + 1 WHERE id = ?", [picture]) }
            } else {
                let removed = try db.execute(
                    "DELETE FROM picture_likes WHERE picture_id = ? AND user_id = ?", [picture, user])
                if removed > 0 { try db.execute("UPDATE pictures SET likes = likes - 1 WHERE id = ?", [picture]) }
            }
            return try db.scalar("SELECT likes FROM pictures WHERE id = ?", [picture], as: Int64.self) ?? 0
        }
    }

    /// Deletes a picture (its likes and reports go with it).
    public func deletePicture(id: Int64) async throws -> Bool {
        try await database.write { db in
            // Only reports that count toward hiding hold a picture for review: a guest's report does not.
            let open = "SELECT 1 FROM picture_reports WHERE picture_id = ? AND state = 'open' AND NOT reporter_guest"
            if try db.scalar("SELECT EXISTS (\(open))", [id], as: Bool.self) == true {
                throw PictureStoreError.underReview
            }
            return try db.execute("DELETE FROM pictures WHERE id = ?", [id]) > 0
        }
    }

    /// Stores a report and hides the picture once enough distinct non-guests reported it.
    public func report(_ report: NewReport) async throws -> Bool {
        try await database.write { db in
            try db.execute(
                """
                INSERT INTO picture_reports (picture_id, reporter_id, reporter_guest, reason, text, created_at)
                VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                """,
                [
                    report.picture, report.reporter.id, report.reporter.isGuest, report.reason.rawValue, report.text,
                    report.at,
                ])
            let reporters =
                try db.scalar(
                    """
                    SELECT count(DISTINCT reporter_id) FROM picture_reports
                    WHERE picture_id = ? AND state = 'open' AND NOT reporter_guest
                    """, [report.picture], as: Int.self) ?? 0
            if reporters >= report.threshold {
                try db.execute("UPDATE pictures SET hidden = 1 WHERE id = ? AND hidden = 0", [report.picture])
            }
            return try db.scalar("SELECT hidden <> 0 FROM pictures WHERE id = ?", [report.picture], as: Bool.self)
                ?? false
        }
    }

    // MARK: Reads

    /// One picture as `viewer` may reach it.
    public func picture(id: Int64, viewer: Int64) async throws -> PictureAccess? {
        try await database.read { db in
            guard let record = try SQLPictures.records(db, ids: [id], viewer: viewer).first else { return nil }
            let reported =
                try db.scalar(
                    "SELECT EXISTS(SELECT 1 FROM picture_reports WHERE picture_id = ? AND reporter_id = ?)",
                    [id, viewer], as: Bool.self) ?? false
            var member = true
            if let event = record.event, event.isPrivate {
                member =
                    try db.scalar(
                        "SELECT EXISTS(SELECT 1 FROM event_members WHERE event_id = ? AND user_id = ?)",
                        [event.id, viewer], as: Bool.self) ?? false
            }
            return PictureAccess(record: record, reportedByViewer: reported, member: member)
        }
    }

    /// A picture as its post announced it, with a private event's members now.
    public func postedPicture(id: Int64) async throws -> PostedPicture? {
        try await database.read { db in
            guard let by = try db.scalar("SELECT by_id FROM pictures WHERE id = ?", [id], as: Int64.self),
                let record = try SQLPictures.records(db, ids: [id], viewer: by).first
            else { return nil }
            var members: Set<Int64>?
            if let event = record.event, event.isPrivate {
                members = Set(
                    try db.scalars("SELECT user_id FROM event_members WHERE event_id = ?", [event.id], as: Int64.self))
            }
            return PostedPicture(record: record, members: members)
        }
    }

    /// The newest pictures the viewer sees matching every word and tag.
    public func searchPictures(words: [String], tags: [String], viewer: Int64, limit: Int) async throws
        -> [PictureRecord]
    {
        try await database.read { db in
            let seer = try SQLPictures.viewer(db, viewer)
            var conditions: [String] = []
            var arguments = SQLArguments()
            // The LIKE that ignores ASCII case narrows the rows by ASCII words (SQLite's ignores no other case);
            // every word is checked again below on the lower-cased caption.
            let like = db.dialect.likeIgnoringCase
            for word in words where word.utf8.allSatisfy({ $0 < 0x80 }) {
                conditions.append(#"p.caption \#(like) ? ESCAPE '\'"#)
                arguments.append("%\(SQLText.escapeLike(word))%")
            }
            for tag in tags where tag.utf8.allSatisfy({ $0 < 0x80 }) {
                conditions.append(#"(e.tag = ? OR p.caption \#(like) ? ESCAPE '\')"#)
                arguments.append(tag)
                arguments.append("%#\(SQLText.escapeLike(tag))%")
            }
            let filter = conditions.isEmpty ? "true" : conditions.joined(separator: " AND ")
            var found: [Int64] = []
            var before: (Int64, Int64) = (.max, .max)
            // Newest first, in chunks, until a page of visible matches (a hashtag must be a whole word).
            while found.count < limit {
                var chunk: SQLArguments = [before.0, before.1]
                chunk += arguments
                // One text per count of words and tags: not kept prepared (`rowsOnce`).
                let rows = try db.rowsOnce(
                    """
                    SELECT p.id, p.lat, p.lon, p.likes, p.created_at, p.hidden, p.private_event, p.caption, e.tag
                    FROM pictures p LEFT JOIN events e ON e.id = p.event_id
                    WHERE (p.created_at, p.id) < (?, ?) AND \(filter)
                    ORDER BY p.created_at DESC, p.id DESC LIMIT 500
                    """, chunk)
                for row in rows {
                    let candidate = SQLPictures.candidate(row)
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
            let records = try SQLPictures.records(db, ids: found, viewer: viewer)
            let byID = Dictionary(records.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            return found.compactMap { byID[$0] }
        }
    }
}
