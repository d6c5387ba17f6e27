// What admins read on the wire: an account with its email, role, suspension and figures, and an audit entry.
import CairnDomain
import CairnWire

extension Suspension {
    /// Writes `{"reason":…,"since":…,"until":…?}`.
    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("reason")
        w.string(reason)
        w.key("since")
        w.int(since)
        if let until {
            w.key("until")
            w.int(until)
        }
        w.endObject()
    }
}

extension AdminUserRow {
    /// Writes `{id, username, name, email?, guest, admin, created, last_seen?, suspended?, friends, buckets,
    /// relics}`.
    func write(to w: inout JSONWriter) {
        w.beginObject()
        user.writeFields(to: &w)
        if let email {
            w.key("email")
            w.string(email)
        }
        w.key("guest")
        w.bool(user.isGuest)
        w.key("admin")
        w.bool(isAdmin)
        w.key("created")
        w.int(createdAt)
        if let lastSeenAt {
            w.key("last_seen")
            w.int(lastSeenAt)
        }
        if let suspension {
            w.key("suspended")
            suspension.write(to: &w)
        }
        w.key("friends")
        w.int(friends)
        w.key("buckets")
        w.int(buckets)
        w.key("relics")
        w.int(relics)
        w.endObject()
    }
}

extension AuditEntry {
    /// Writes `{id, ts, admin: {user}, action, target: {kind, id, name?}, reason?, detail?}`.
    func write(id: Int64, to w: inout JSONWriter) {
        w.beginObject()
        w.key("id")
        w.int(id)
        w.key("ts")
        w.int(at)
        w.key("admin")
        admin.write(to: &w)
        w.key("action")
        w.string(action)
        w.key("target")
        w.beginObject()
        w.key("kind")
        w.string(targetKind)
        w.key("id")
        w.int(targetID)
        if let targetName {
            w.key("name")
            w.string(targetName)
        }
        w.endObject()
        if let reason {
            w.key("reason")
            w.string(reason)
        }
        if let detail {
            w.key("detail")
            w.string(detail)
        }
        w.endObject()
    }
}
