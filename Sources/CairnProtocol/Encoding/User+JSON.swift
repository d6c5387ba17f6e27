// Accounts on the wire: the contract's user object `{id, username, name}`, and a friend as listed, which adds
// whether they are online.
import CairnCore
import CairnSocial
import CairnWire

extension User {
    /// Writes `{"id":…,"username":…,"name":…}`.
    func write(to w: inout JSONWriter) {
        w.beginObject()
        writeFields(to: &w)
        w.endObject()
    }

    /// Writes `"id":…,"username":…,"name":…` into an open object (objects that extend the user add their own).
    func writeFields(to w: inout JSONWriter) {
        w.key("id")
        w.int(id)
        w.key("username")
        w.string(username)
        w.key("name")
        w.string(name)
    }
}

extension FriendEntry {
    /// Writes `{"id":…,"username":…,"name":…,"online":…}`.
    func write(to w: inout JSONWriter) {
        w.beginObject()
        user.writeFields(to: &w)
        w.key("online")
        w.bool(online)
        w.endObject()
    }
}
