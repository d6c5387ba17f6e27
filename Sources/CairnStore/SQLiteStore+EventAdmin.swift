// An admin's deletion of an event (`admin.event.delete`: the event, its pictures and memberships, the audit line), and
// an admin's change to an event (`admin.event.update`) in one transaction: the event's title and password hash, the
// `private_event` copy in each of its pictures (what pages read visibility from), the posters made members when it
// becomes private, and the audit line. No migration: every column it writes exists since v19-pictures-events.
import CairnAdmin
import CairnPictures
import GRDB

extension SQLiteStore {
    /// Applies `update` with its audit line; nil when there is no such event.
    public func updateEvent(_ update: EventUpdate, audit: AuditEntry) async throws -> (
        info: EventInfo, members: Set<Int64>?
    )? {
        try await pool.write { db in
            let id = update.event
            guard
                let wasPrivate = try Bool.fetchOne(
                    db, sql: "SELECT password_hash IS NOT NULL FROM events WHERE id = ?", arguments: [id])
            else { return nil }
            switch update.title {
            case .keep: break
            case .clear: try db.execute(sql: "UPDATE events SET title = NULL WHERE id = ?", arguments: [id])
            case .set(let title):
                try db.execute(sql: "UPDATE events SET title = ? WHERE id = ?", arguments: [title, id])
            }
            var isPrivate = wasPrivate
            switch update.passwordHash {
            case .keep: break
            case .clear:
                try db.execute(sql: "UPDATE events SET password_hash = NULL WHERE id = ?", arguments: [id])
                isPrivate = false
            case .set(let hash):
                try db.execute(sql: "UPDATE events SET password_hash = ? WHERE id = ?", arguments: [hash, id])
                isPrivate = true
            }
            if isPrivate && !wasPrivate {
                try db.execute(
                    sql: """
                        INSERT OR IGNORE INTO event_members (event_id, user_id, joined_at)
                        SELECT DISTINCT event_id, by_id, ? FROM pictures WHERE event_id = ?
                        """, arguments: [update.at, id])
            }
            if isPrivate != wasPrivate {
                try db.execute(
                    sql: "UPDATE pictures SET private_event = ? WHERE event_id = ?",
                    arguments: [isPrivate ? id : nil, id])
            }
            try Self.append(audit, db)
            guard let info = try Self.eventInfo(db, id: id, viewer: audit.admin.id) else { return nil }
            let members: Set<Int64>? =
                isPrivate
                ? Set(
                    try Int64.fetchAll(db, sql: "SELECT user_id FROM event_members WHERE event_id = ?", arguments: [id])
                )
                : nil
            return (info, members)
        }
    }

    /// Deletes an event as an admin, with its pictures (open reports or not) and memberships, and its audit line.
    public func deleteEventAsAdmin(id: Int64, audit: AuditEntry) async throws -> Bool {
        try await pool.write { db in
            guard
                try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM events WHERE id = ?)", arguments: [id])
                    == true
            else { return false }
            try db.execute(sql: "DELETE FROM pictures WHERE event_id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM events WHERE id = ?", arguments: [id])
            try Self.append(audit, db)
            return true
        }
    }
}
