// Friend ops (seeds 000 and 001): search, request, accept, decline, remove, list, requests.
import CairnSocial
import CairnWire

enum FriendOps {
    static func register(in table: inout OpTable, social: Social) {
        table.slow(
            "user.search", decode: { m throws(WireError) in try m.requireString("q") },
            handle: { caller, q, done in social.search(caller.member, query: q, done) },
            encode: { users, w in
                w.array("users", users) { u, w in u.write(to: &w) }
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
                w.array("friends", friends) { f, w in f.write(to: &w) }
            })
        table.slow(
            "friend.requests", decode: Fields.none,
            handle: { caller, _, done in social.requests(caller.member, done) },
            encode: { lists, w in
                w.array("incoming", lists.incoming) { u, w in u.write(to: &w) }
                w.array("outgoing", lists.outgoing) { u, w in u.write(to: &w) }
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
