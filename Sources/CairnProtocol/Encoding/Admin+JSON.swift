// What admins read on the wire: an account with its email, role, suspension and figures, and an audit entry.
import CairnAdmin
import CairnCore
import CairnSessions
import CairnWire

extension Suspension {
    /// Writes `{"reason":…,"since":…,"until":…?}`.
    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("reason", reason)
        w.field("since", since)
        w.field("until", until)
        w.endObject()
    }
}

extension AdminUserRow {
    /// Writes `{id, username, name, email?, guest, admin, created, last_seen?, suspended?, friends, buckets,
    /// relics, pictures, likes_received, open_reports}`.
    func write(to w: inout JSONWriter) {
        w.beginObject()
        user.writeFields(to: &w)
        w.field("email", email)
        w.field("guest", user.isGuest)
        w.field("admin", isAdmin)
        w.field("created", createdAt)
        w.field("last_seen", lastSeenAt)
        if let suspension {
            w.key("suspended")
            suspension.write(to: &w)
        }
        w.field("friends", friends)
        w.field("buckets", buckets)
        w.field("relics", relics)
        w.field("pictures", pictures)
        w.field("likes_received", likesReceived)
        w.field("open_reports", openReports)
        w.endObject()
    }
}

extension AuditEntry {
    /// Writes `{id, ts, admin: {user}, action, target: {kind, id, name?}, reason?, detail?}`.
    func write(id: Int64, to w: inout JSONWriter) {
        w.beginObject()
        w.field("id", id)
        w.field("ts", at)
        w.key("admin")
        admin.write(to: &w)
        w.field("action", action)
        w.key("target")
        w.beginObject()
        w.field("kind", targetKind)
        w.field("id", targetID)
        w.field("name", targetName)
        w.endObject()
        w.field("reason", reason)
        w.field("detail", detail)
        w.endObject()
    }
}
