// Chat between friends (seed 003's chat and message screens). Sending requires a friendship at the moment of
// sending; the message is committed before the reply and then pushed as `chat.msg` to every connection of the
// recipient and to the sender's other connections (so a second device shows it too). Reading history, listing
// conversations and marking read only touch the caller's own conversations and need no friendship: a former
// friend's messages stay readable. Marking read is pushed as `chat.read` to the reader's other connections so
// unread badges agree across devices.
import CairnWire

extension Hub {
    func sendChat(id: Int64?, from client: Client, user: User) throws(WireError) {
        let to = try message.requireInt("to")
        let text = try message.requireString("text")
        guard to != user.id else { throw .badRequest("you cannot message yourself") }
        guard !text.trimmingWhitespace().isEmpty else { throw .badRequest("field 'text' must not be empty") }
        guard text.count <= configuration.chatTextLimit else {
            throw .badRequest("field 'text' must be at most \(configuration.chatTextLimit) characters")
        }
        guard graph.areFriends(user.id, to) else {
            throw WireError(.notFriends, "you can only message friends; user \(to) is not your friend")
        }
        let chat = self.chat, me = user.id, now = clock.now(), sender = client.id
        start(client, id: id, op: "chat.send", { () async throws(WireError) -> ChatMessage in
            try await Self.storage { try await chat.saveMessage(from: me, to: to, text: text, at: now) }
        }, then: { client, sent in
            self.replyOK(client, id: id) { w in w.key("message"); Self.writeChat(sent, to: &w) }
            self.writer.reset()
            Envelope.event("chat.msg", into: &self.writer) { w in w.key("message"); Self.writeChat(sent, to: &w) }
            for connection in self.sessions[to] ?? [] { self.flush(to: connection) }
            for connection in self.sessions[me] ?? [] where connection != sender { self.flush(to: connection) }
        })
    }

    func listChats(id: Int64?, from client: Client, user: User) throws(WireError) {
        let chat = self.chat, social = self.social, me = user.id, limit = configuration.chatListLimit
        start(client, id: id, op: "chat.list", { () async throws(WireError) -> ([ChatConversation], [Int64: User]) in
            let conversations = try await Self.storage { try await chat.conversations(of: me, limit: limit) }
            let users = try await Self.storage { try await social.users(ids: conversations.map(\.peer)) }
            return (conversations, Dictionary(users.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a }))
        }, then: { client, result in
            let (conversations, users) = result
            self.replyOK(client, id: id) { w in
                w.key("conversations"); w.beginArray()
                for c in conversations {
                    w.beginObject()
                    w.field("with", c.peer)
                    if let peer = users[c.peer] { w.key("user"); peer.write(to: &w) }
                    w.key("last"); Self.writeChat(c.last, to: &w)
                    w.field("unread", c.unread)
                    w.endObject()
                }
                w.endArray()
            }
        })
    }

    func chatHistory(id: Int64?, from client: Client, user: User) throws(WireError) {
        let peer = try message.requireInt("with")
        let before = try message.int("before")
        let limit = try message.int("limit") ?? Int64(configuration.chatHistoryDefault)
        guard peer != user.id else { throw .badRequest("field 'with' must be another user") }
        guard limit >= 1 && limit <= Int64(configuration.chatHistoryMax) else {
            throw .badRequest("field 'limit' must be between 1 and \(configuration.chatHistoryMax)")
        }
        if let before, before <= 0 { throw .badRequest("field 'before' must be a message id") }
        let chat = self.chat, me = user.id, count = Int(limit)
        start(client, id: id, op: "chat.history", { () async throws(WireError) -> [ChatMessage] in
            // One more than asked tells whether an older page exists.
            try await Self.storage { try await chat.history(of: me, with: peer, before: before, limit: count + 1) }
        }, then: { client, messages in
            let more = messages.count > count
            self.replyOK(client, id: id) { w in
                w.key("messages"); w.beginArray()
                for m in messages.suffix(count) { Self.writeChat(m, to: &w) }
                w.endArray()
                w.field("more", more)
            }
        })
    }

    func readChat(id: Int64?, from client: Client, user: User) throws(WireError) {
        let peer = try message.requireInt("with")
        let upto = try message.requireInt("upto")
        guard peer != user.id else { throw .badRequest("field 'with' must be another user") }
        guard upto > 0 else { throw .badRequest("field 'upto' must be a message id") }
        let chat = self.chat, me = user.id, reader = client.id
        start(client, id: id, op: "chat.read", { () async throws(WireError) -> Int in
            try await Self.storage { try await chat.markRead(reader: me, peer: peer, upto: upto) }
        }, then: { client, unread in
            self.replyOK(client, id: id) { w in w.field("unread", unread) }
            self.writer.reset()
            Envelope.event("chat.read", into: &self.writer) { w in
                w.field("with", peer)
                w.field("upto", upto)
                w.field("unread", unread)
            }
            for connection in self.sessions[me] ?? [] where connection != reader { self.flush(to: connection) }
        })
    }

    /// The contract's message object `{id, from, to, text, ts}`.
    static func writeChat(_ m: ChatMessage, to w: inout JSONWriter) {
        w.beginObject()
        w.field("id", m.id)
        w.field("from", m.from)
        w.field("to", m.to)
        w.field("text", m.text)
        w.field("ts", m.ts)
        w.endObject()
    }
}
