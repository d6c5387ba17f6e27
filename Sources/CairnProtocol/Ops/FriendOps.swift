// Friend ops (seeds 000 and 001): search, request, accept, decline, remove, list, requests.
import CairnDomain
import CairnWire

enum FriendOps {
    static func register(in table: inout OpTable, social: Social) {
        table.slow(
            "user.search", decode: { m throws(WireError) in try m.requireString("q") },
            handle: { caller, q, done in social.search(caller.member, query: q, done) },
            encode: { users, w in
                w.key("users")
                w.beginArray()
                for u in users { u.write(to: &w) }
                w.endArray()
            })
        table.slow(
            "friend.request", decode: Fields.userID,
            handle: { caller, target, done in social.request(caller.member, target: target, done) },
            encode: writeReply)
        table.slow(
            "friend.accept", decode: Fields.userID,
            handle: { caller, target, done in social.accept(caller.member, target: target, done) },
            encode: writeReply)
        table.slow(
            "friend.decline", decode: Fields.userID,
            handle: { caller, target, done in social.decline(caller.member, target: target, done) },
            encode: Fields.empty)
        table.slow(
            "friend.remove", decode: Fields.userID,
            handle: { caller, target, done in social.remove(caller.member, target: target, done) },
            encode: writeReply)
        table.slow(
            "friend.list", decode: Fields.none, handle: { caller, _, done in social.list(caller.member, done) },
            encode: { friends, w in
                w.key("friends")
                w.beginArray()
                for f in friends { f.write(to: &w) }
                w.endArray()
            })
        table.slow(
            "friend.requests", decode: Fields.none,
            handle: { caller, _, done in social.requests(caller.member, done) },
            encode: { lists, w in
                w.key("incoming")
                w.beginArray()
                for u in lists.incoming { u.write(to: &w) }
                w.endArray()
                w.key("outgoing")
                w.beginArray()
                for u in lists.outgoing { u.write(to: &w) }
                w.endArray()
            })
    }

    private static func writeReply(_ reply: FriendReply, _ w: inout JSONWriter) {
        w.key("status")
        w.string(reply.status.rawValue)
        if let friend = reply.friend {
            w.key("friend")
            friend.write(to: &w)
        }
    }
}
