// An admin's deletion of an event (`admin.event.delete`, with its pictures, memberships and audit line), and an
// admin's change to an event (`admin.event.update`) in one transaction of the shared store: the event's title
// and password hash, the `private_event` copy in each of its pictures (what pages read visibility from), the
// posters made members when it becomes private, and the audit line, as the SQLite store does.
import CairnAdmin
import CairnPictures

extension PostgresStore {
    /// Applies `update` with its audit line; nil when there is no such event.
    public func updateEvent(_ update: EventUpdate, audit: AuditEntry) async throws -> (
        info: EventInfo, members: Set<Int64>?
    )? {
        try await pool.write { db in
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
                    SELECT DISTINCT event_id, by_id, ?::bigint FROM pictures WHERE event_id = ?
                    ON CONFLICT DO NOTHING
                    """, [update.at, id])
            }
            if isPrivate != wasPrivate {
                try db.execute(
                    "UPDATE pictures SET private_event = ? WHERE event_id = ?", [isPrivate ? id : nil, id])
            }
            try Self.appendPictureAudit(audit, db)
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
        try await pool.write { db in
            try db.execute("DELETE FROM pictures WHERE event_id = ?", [id])
            guard try db.execute("DELETE FROM events WHERE id = ?", [id]) > 0 else { return false }
            try Self.appendPictureAudit(audit, db)
            return true
        }
    }
}
