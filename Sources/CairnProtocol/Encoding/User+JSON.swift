// Accounts on the wire: the contract's user object `{id, username, name}`, and a friend as listed, which adds
// whether they are online.
import CairnDomain
import CairnWire

extension User {
    /// Writes `{"id":…,"username":…,"name":…}`.
    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("id")
        w.int(id)
        w.key("username")
        w.string(username)
        w.key("name")
        w.string(name)
        w.endObject()
    }
}

extension FriendEntry {
    /// Writes `{"id":…,"username":…,"name":…,"online":…}`.
    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("id")
        w.int(user.id)
        w.key("username")
        w.string(user.username)
        w.key("name")
        w.string(user.name)
        w.key("online")
        w.bool(online)
        w.endObject()
    }
}
