// Chat ops: send, list, history, read.
import CairnChat
import CairnWire

enum ChatOps {
    static func register(in table: inout OpTable, chat: Chat) {
        table.slow(
            "chat.send", decode: { m throws(WireError) in (try m.requireInt("to"), try m.requireString("text")) },
            handle: { caller, r, done in chat.send(caller.member, to: r.0, text: r.1, done) },
            encode: { message, w in
                w.key("message")
                message.write(to: &w)
            })
        table.slow(
            "chat.list", decode: Fields.none, handle: { caller, _, done in chat.conversations(caller.member, done) },
            encode: { conversations, w in
                w.key("conversations")
                w.beginArray()
                for entry in conversations {
                    let c = entry.conversation
                    w.beginObject()
                    w.field("with", c.peer)
                    if let peer = entry.peer {
                        w.key("user")
                        peer.write(to: &w)
                    }
                    w.key("last")
                    c.last.write(to: &w)
                    w.field("unread", c.unread)
                    w.endObject()
                }
                w.endArray()
            })
        table.slow(
            "chat.history",
            decode: { m throws(WireError) in
                (try m.requireInt("with"), try m.int("before"), try m.int("limit"))
            }, handle: { caller, r, done in chat.history(caller.member, with: r.0, before: r.1, limit: r.2, done) },
            encode: { page, w in
                w.array("messages", page.messages) { m, w in m.write(to: &w) }
                w.field("more", page.more)
            })
        table.slow(
            "chat.read", decode: { m throws(WireError) in (try m.requireInt("with"), try m.requireInt("upto")) },
            handle: { caller, r, done in chat.markRead(caller.member, with: r.0, upto: r.1, done) },
            encode: { mark, w in
                w.field("upto", mark.upto)
                w.field("unread", mark.unread)
            })
    }
}
