// Messages between friends, as stored. A message is committed before `chat.send` replies (it must survive kill -9)
// and is identified by a store-assigned id that only grows, which is also the order of a conversation and the
// cursor for paging backwards and for marking read ("everything up to id N"). The message itself (`ChatMessage`)
// is in the core, as the hub's events carry it.
public import CairnCore

/// A conversation as listed: the other person, the last message and how many of theirs are unread.
public struct ChatConversation: Sendable, Equatable {
    /// The other user.
    public var peer: Int64
    /// The newest message, in either direction.
    public var last: ChatMessage
    /// Messages from `peer` not yet marked read.
    public var unread: Int

    /// Creates the value.
    public init(peer: Int64, last: ChatMessage, unread: Int) {
        self.peer = peer
        self.last = last
        self.unread = unread
    }
}

/// Durable storage for chat.
public protocol ChatStore: Sendable {
    /// Stores a message and returns it with its id.
    func saveMessage(from: Int64, to: Int64, text: String, at ts: Int64) async throws -> ChatMessage
    /// The user's conversations, most recently active first, at most `limit`.
    func conversations(of user: Int64, limit: Int) async throws -> [ChatConversation]
    /// Messages between `user` and `peer` with ids below `before` when given: the newest `limit` of them, oldest
    /// first (so a page reads top to bottom and the next page asks `before` its first id).
    func history(of user: Int64, with peer: Int64, before: Int64?, limit: Int) async throws -> [ChatMessage]
    /// Marks messages from `peer` to `reader` with ids up to `upto` as read and returns the mark now stored and how
    /// many from `peer` remain unread. The mark never moves backwards and never past the newest message from `peer`
    /// (so a large `upto` cannot pre-read messages not yet sent). Nil when `peer` never wrote to `reader`.
    func markRead(reader: Int64, peer: Int64, upto: Int64) async throws -> (upto: Int64, unread: Int)?
}
