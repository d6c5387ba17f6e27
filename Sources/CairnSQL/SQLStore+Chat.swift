// Chat, implementing the domain's `ChatStore`. A conversation is the pair (low id, high id), so both directions share
// one index and a page is one range scan. Read marks are one row per (reader, peer): "messages from peer with id ≤
// upto are read", which only moves forward, so unread counts are a range count. The conversation list is one
// statement (last message and unread count per peer), not one per peer: on PostgreSQL each would be a round trip.
// Ids are handed out at INSERT but become visible at COMMIT, so two PostgreSQL writers could commit a conversation's
// ids out of order: a reader paging with `id < before`, or marking read up to the newest id it saw, would then skip
// the lower id committed later. Each insert therefore holds the conversation's lock until it commits
// (`lockUntilCommit`), so within a conversation ids are committed in id order; SQLite's single writer gives the same.
public import CairnChat
public import CairnCore

extension SQLStore {
    /// Stores a message.
    public func saveMessage(from: Int64, to: Int64, text: String, at ts: Int64) async throws -> ChatMessage {
        try await database.write { db in
            try db.lockUntilCommit(Self.conversationLock(from, to))
            let id: Int64 = try db.scalar(
                "INSERT INTO chat_messages (user_a, user_b, from_id, text, ts) VALUES (?, ?, ?, ?, ?) RETURNING id",
                [min(from, to), max(from, to), from, text, ts])!
            return ChatMessage(id: id, from: from, to: to, text: text, ts: ts)
        }
    }

    /// The lock key of the conversation between `a` and `b` (either order): the pair's ids mixed into 63 bits. Two
    /// conversations sharing a key only take turns.
    public static func conversationLock(_ a: Int64, _ b: Int64) -> Int64 {
        let (low, high) = (UInt64(bitPattern: min(a, b)), UInt64(bitPattern: max(a, b)))
        let mixed = (low &* 0x9E37_79B9_7F4A_7C15) ^ (high &+ 0x6368_6174)  // "chat"
        return Int64(bitPattern: mixed & 0x7FFF_FFFF_FFFF_FFFF) | 0x4000_0000_0000_0000
    }

    /// Conversations, most recently active first.
    public func conversations(of user: Int64, limit: Int) async throws -> [ChatConversation] {
        try await database.read { db in
            try db.rows(
                """
                WITH lasts AS (
                  SELECT peer, MAX(id) AS last FROM (
                    SELECT user_b AS peer, id FROM chat_messages WHERE user_a = ?
                    UNION ALL
                    SELECT user_a AS peer, id FROM chat_messages WHERE user_b = ?
                  ) AS mine GROUP BY peer ORDER BY last DESC LIMIT ?)
                SELECT m.id, m.from_id, m.user_a, m.user_b, m.text, m.ts, l.peer,
                  (SELECT COUNT(*) FROM chat_messages u
                   WHERE u.user_a = m.user_a AND u.user_b = m.user_b AND u.from_id = l.peer
                     AND u.id > coalesce(
                       (SELECT upto FROM chat_reads r WHERE r.reader_id = ? AND r.peer_id = l.peer), 0)) AS unread
                FROM lasts l JOIN chat_messages m ON m.id = l.last
                ORDER BY l.last DESC
                """, [user, user, limit, user]
            ).map { row in ChatConversation(peer: row["peer"], last: SQLChat.message(row), unread: row["unread"]) }
        }
    }

    /// A page of a conversation, oldest first.
    public func history(of user: Int64, with peer: Int64, before: Int64?, limit: Int) async throws -> [ChatMessage] {
        try await database.read { db in
            try db.rows(
                """
                SELECT id, from_id, user_a, user_b, text, ts FROM chat_messages
                WHERE user_a = ? AND user_b = ? AND id < ? ORDER BY id DESC LIMIT ?
                """, [min(user, peer), max(user, peer), before ?? Int64.max, limit]
            ).map(SQLChat.message).reversed()
        }
    }

    /// Moves the read mark forward, up to the newest message from `peer`.
    public func markRead(reader: Int64, peer: Int64, upto: Int64) async throws -> (upto: Int64, unread: Int)? {
        let pair = [min(reader, peer), max(reader, peer)]
        return try await database.write { db -> (upto: Int64, unread: Int)? in
            guard
                let newest = try db.scalar(
                    "SELECT MAX(id) FROM chat_messages WHERE user_a = ? AND user_b = ? AND from_id = ?",
                    [pair[0], pair[1], peer], as: Int64.self)
            else { return nil }
            let mark: Int64 = try db.scalar(
                """
                INSERT INTO chat_reads (reader_id, peer_id, upto) VALUES (?, ?, ?)
                ON CONFLICT (reader_id, peer_id) DO UPDATE SET upto = \
                \(db.dialect.greatest("chat_reads.upto", "excluded.upto"))
                RETURNING upto
                """, [reader, peer, min(upto, newest)])!
            let unread: Int = try db.scalar(
                "SELECT COUNT(*) FROM chat_messages WHERE user_a = ? AND user_b = ? AND from_id = ? AND id > ?",
                [pair[0], pair[1], peer, mark])!
            return (mark, unread)
        }
    }
}

enum SQLChat {
    static func message(_ row: SQLRow) -> ChatMessage {
        let from: Int64 = row["from_id"]
        let a: Int64 = row["user_a"]
        let b: Int64 = row["user_b"]
        return ChatMessage(id: row["id"], from: from, to: from == a ? b : a, text: row["text"], ts: row["ts"])
    }
}
