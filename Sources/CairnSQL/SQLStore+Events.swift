public import CairnAdmin
// Events and the moderation of pictures, implementing their part of the domain's `PictureStore` (the pictures'
// posting, likes and the geographic queries are each engine's own: their statements are tuned to each engine's
// planner). An event's tag is unique; a private event's members are rows of `event_members`. An admin's change to an
// event (`admin.event.update`) is one transaction: the event's title and password hash, the `private_event` copy in
// each of its pictures (what pages read visibility from), the posters made members when it becomes private, and the
// audit line; an admin's deletion takes the event's pictures and memberships along. Tags are ordered bytewise and
// matched ignoring (ASCII) case on both engines; titles are stored lower-cased.
public import CairnCore
public import CairnPictures

extension SQLStore {
    // MARK: Events

    private static var eventColumns: String {
        """
        e.id, e.tag, e.title, e.owner_id, u.username, u.name, u.is_guest, e.password_hash, e.created_at,
        (SELECT count(*) FROM pictures p WHERE p.event_id = e.id) AS pictures,
        EXISTS(SELECT 1 FROM event_members m WHERE m.event_id = e.id AND m.user_id = ?) AS joined
        """
    }

    private static func event(_ row: SQLRow) -> (info: EventInfo, passwordHash: String?) {
        let hash: String? = row["password_hash"]
        let joined: Bool = row["joined"]
        let info = EventInfo(
            id: row["id"], tag: row["tag"], title: row["title"],
            owner: User(id: row["owner_id"], username: row["username"], name: row["name"], isGuest: row["is_guest"]),
            isPrivate: hash != nil, createdAt: row["created_at"], member: hash == nil || joined,
            pictures: row["pictures"])
        return (info, hash)
    }

    /// Stores an event; its owner becomes a member.
    public func createEvent(_ event: NewEvent) async throws -> EventInfo {
        do {
            return try await database.write { db in
                let taken =
                    try db.scalar("SELECT EXISTS(SELECT 1 FROM events WHERE tag = ?)", [event.tag], as: Bool.self)
                    ?? false
                guard !taken else { throw PictureStoreError.tagTaken }
                let id = try db.scalar(
                    """
                    INSERT INTO events (tag, title, owner_id, password_hash, created_at) VALUES (?, ?, ?, ?, ?)
                    RETURNING id
                    """, [event.tag, event.title, event.owner, event.passwordHash, event.createdAt], as: Int64.self)!
                try db.execute(
                    "INSERT INTO event_members (event_id, user_id, joined_at) VALUES (?, ?, ?)",
                    [id, event.owner, event.createdAt])
                guard let info = try Self.eventInfo(db, id: id, viewer: event.owner) else {
                    throw PictureStoreError.tagTaken
                }
                return info
            }
        } catch  where database.isUniqueViolation(error) {
            throw PictureStoreError.tagTaken
        }
    }

    /// An event by id as `viewer` sees it.
    static func eventInfo(_ db: any SQLDatabase, id: Int64, viewer: Int64) throws -> EventInfo? {
        try db.row(
            "SELECT \(Self.eventColumns) FROM events e JOIN users u ON u.id = e.owner_id WHERE e.id = ?", [viewer, id]
        ).map { Self.event($0).info }
    }

    /// An event by tag.
    public func event(tag: String, viewer: Int64) async throws -> (info: EventInfo, passwordHash: String?)? {
        try await database.read { db in
            try db.row(
                "SELECT \(Self.eventColumns) FROM events e JOIN users u ON u.id = e.owner_id WHERE e.tag = ?",
                [viewer, tag]
            ).map(Self.event)
        }
    }

    /// Records a membership.
    public func join(event: Int64, user: Int64, at: Int64) async throws {
        try await database.write { db in
            try db.execute(
                "INSERT INTO event_members (event_id, user_id, joined_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                [event, user, at])
        }
    }

    /// Events whose tag or title contains `text` (lower case; titles are lower-cased, non-ASCII letters too), tags
    /// in byte order.
    public func searchEvents(text: String, viewer: Int64, limit: Int) async throws -> [EventInfo] {
        try await database.read { db in
            let pattern = "%\(SQLText.escapeLike(text))%"
            return try db.rows(
                """
                SELECT \(Self.eventColumns) FROM events e JOIN users u ON u.id = e.owner_id
                WHERE e.tag \(db.dialect.likeIgnoringCase) ? ESCAPE '\\' OR lower(e.title) LIKE ? ESCAPE '\\'
                ORDER BY \(db.dialect.bytewise("e.tag")) LIMIT ?
                """, [viewer, pattern, pattern, limit]
            ).map { Self.event($0).info }
        }
    }

    /// Deletes an event, its pictures and its memberships.
    public func deleteEvent(id: Int64) async throws {
        try await database.write { db in
            let open = """
                SELECT 1 FROM picture_reports r JOIN pictures p ON p.id = r.picture_id
                WHERE p.event_id = ? AND r.state = 'open' AND NOT r.reporter_guest
                """
            if try db.scalar("SELECT EXISTS (\(open))", [id], as: Bool.self) == true {
                throw PictureStoreError.underReview
            }
            try db.execute("DELETE FROM pictures WHERE event_id = ?", [id])
            try db.execute("DELETE FROM events WHERE id = ?", [id])
        }
    }

    // MARK: Moderation

    /// Pictures with open (or resolved) reports, oldest report first, with all their reports.
    public func reportedPictures(open: Bool, limit: Int) async throws -> [(
        record: PictureRecord, reports: [PictureReport]
    )] {
        try await database.read { db in
            let ids = try db.scalars(
                """
                SELECT picture_id FROM picture_reports WHERE state = ?
                GROUP BY picture_id ORDER BY min(created_at), picture_id LIMIT ?
                """, [open ? "open" : "resolved", limit], as: Int64.self)
            guard !ids.isEmpty else { return [] }
            let records = try SQLPictures.records(db, ids: ids, viewer: 0)
            let byID = Dictionary(records.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            var reports: [Int64: [PictureReport]] = [:]
            for row in try db.rows(
                """
                SELECT r.picture_id, r.reason, r.text, r.created_at, r.state, u.id, u.username, u.name, u.is_guest
                FROM picture_reports r JOIN users u ON u.id = r.reporter_id
                WHERE \(db.dialect.isAny("r.picture_id")) ORDER BY r.created_at, r.id
                """, [SQLIntegers(ids)])
            {
                let reporter = User(
                    id: row["id"], username: row["username"], name: row["name"], isGuest: row["is_guest"])
                reports[row["picture_id"], default: []].append(
                    PictureReport(
                        reporter: reporter, reason: row["reason"], text: row["text"], createdAt: row["created_at"],
                        resolved: row["state"] as String == "resolved"))
            }
            return ids.compactMap { id in byID[id].map { ($0, reports[id] ?? []) } }
        }
    }

    /// Resolves a picture's open reports and restores or removes it, with its audit entry, in one transaction.
    public func resolveReports(picture: Int64, remove: Bool, audit: AuditEntry) async throws -> Bool {
        try await database.write { db in
            guard
                try db.scalar("SELECT EXISTS(SELECT 1 FROM pictures WHERE id = ?)", [picture], as: Bool.self)
                    ?? false
            else { return false }
            let resolved = try db.execute(
                """
                UPDATE picture_reports SET state = 'resolved', resolved_at = ?, resolved_by = ?
                WHERE picture_id = ? AND state = 'open'
                """, [audit.at, audit.admin.id, picture])
            var entry = audit
            entry.detail = "reports=\(resolved)"
            try db.execute("UPDATE pictures SET hidden = ? WHERE id = ?", [Int64(remove ? 2 : 0), picture])
            try SQLAdmin.append(entry, db)
            return true
        }
    }

    // MARK: Admins

    /// Applies `update` with its audit line; nil when there is no such event.
    public func updateEvent(_ update: EventUpdate, audit: AuditEntry) async throws -> (
        info: EventInfo, members: Set<Int64>?
    )? {
        try await database.write { db in
            let id = update.event
            guard
                let wasPrivate = try db.scalar(
                    "SELECT password_hash IS NOT NULL FROM events WHERE id = ?", [id], as: Bool.self)
            else { return nil }
            switch update.title {
            case .keep: break
            case .clear: try db.execute("UPDATE events SET title = NULL WHERE id = ?", [id])
            case .set(let title): try db.execute("UPDATE events SET title = ? WHERE id = ?", [title, id])
            }
            var isPrivate = wasPrivate
            switch update.passwordHash {
            case .keep: break
            case .clear:
                try db.execute("UPDATE events SET password_hash = NULL WHERE id = ?", [id])
                isPrivate = false
            case .set(let hash):
                try db.execute("UPDATE events SET password_hash = ? WHERE id = ?", [hash, id])
                isPrivate = true
            }
            if isPrivate && !wasPrivate {
                try db.execute(
                    """
                    INSERT INTO event_members (event_id, user_id, joined_at)
                    SELECT DISTINCT event_id, by_id, CAST(? AS BIGINT) FROM pictures WHERE event_id = ?
                    ON CONFLICT DO NOTHING
                    """, [update.at, id])
            }
            if isPrivate != wasPrivate {
                try db.execute(
                    "UPDATE pictures SET private_event = ? WHERE event_id = ?", [isPrivate ? id : nil, id])
            }
            try SQLAdmin.append(audit, db)
            guard let info = try Self.eventInfo(db, id: id, viewer: audit.admin.id) else { return nil }
            let members: Set<Int64>? =
                isPrivate
                ? Set(try db.scalars("SELECT user_id FROM event_members WHERE event_id = ?", [id], as: Int64.self))
                : nil
            return (info, members)
        }
    }

    /// Deletes an event as an admin, with its pictures (open reports or not) and memberships, and its audit line.
    public func deleteEventAsAdmin(id: Int64, audit: AuditEntry) async throws -> Bool {
        try await database.write { db in
            try db.execute("DELETE FROM pictures WHERE event_id = ?", [id])
            guard try db.execute("DELETE FROM events WHERE id = ?", [id]) > 0 else { return false }
            try SQLAdmin.append(audit, db)
            return true
        }
    }
}

/// The pictures' records as a viewer sees them, for every part of the store that answers with pictures.
public enum SQLPictures {
    /// A candidate from a row whose first columns are id, lat, lon, likes, created_at, hidden, private_event.
    static func candidate(_ row: SQLRow) -> PictureCandidate {
        let lat: Double? = row[1]
        let lon: Double? = row[2]
        let hidden: Int64 = row[5]
        return PictureCandidate(
            id: row[0], lat: lat, lon: lon, likes: row[3], createdAt: row[4], hidden: hidden != 0,
            privateEvent: row[6])
    }

    /// The private events `user` joined and the pictures they reported.
    public static func viewer(_ db: any SQLDatabase, _ user: Int64) throws -> PictureViewer {
        let joined = try db.scalars(
            """
            SELECT m.event_id FROM event_members m JOIN events e ON e.id = m.event_id
            WHERE m.user_id = ? AND e.password_hash IS NOT NULL
            """, [user], as: Int64.self)
        let reported = try db.scalars(
            "SELECT picture_id FROM picture_reports WHERE reporter_id = ?", [user], as: Int64.self)
        return PictureViewer(user: user, joined: Set(joined), reported: Set(reported))
    }

    /// Full records of `ids` as `viewer` sees them (in no particular order).
    public static func records(_ db: any SQLDatabase, ids: [Int64], viewer: Int64) throws -> [PictureRecord] {
        guard !ids.isEmpty else { return [] }
        return try db.rows(
            """
            SELECT p.id, p.by_id, u.username, u.name, u.is_guest, p.caption, p.event_id, e.tag,
                   e.password_hash IS NOT NULL AS private, p.lat, p.lon, p.likes, p.created_at, p.media_id,
                   p.hidden,
                   EXISTS(SELECT 1 FROM picture_likes l WHERE l.picture_id = p.id AND l.user_id = ?) AS liked
            FROM pictures p JOIN users u ON u.id = p.by_id LEFT JOIN events e ON e.id = p.event_id
            WHERE \(db.dialect.isAny("p.id"))
            """, [viewer, SQLIntegers(ids)]
        ).map { row in
            let lat: Double? = row["lat"]
            let lon: Double? = row["lon"]
            let eventID: Int64? = row["event_id"]
            return PictureRecord(
                id: row["id"],
                by: User(id: row["by_id"], username: row["username"], name: row["name"], isGuest: row["is_guest"]),
                caption: row["caption"],
                event: eventID.map { EventRef(id: $0, tag: row["tag"], isPrivate: row["private"]) },
                lat: lat, lon: lon, likes: row["likes"],
                liked: row["liked"], createdAt: row["created_at"], mediaID: row["media_id"],
                hidden: row["hidden"] as Int64 != 0)
        }
    }
}
