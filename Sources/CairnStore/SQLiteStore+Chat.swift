// Chat in SQLite, implementing the domain's `ChatStore`. A conversation is the pair (low id, high id), so both
// directions share one index and a page is one range scan. Read marks are one row per (reader, peer): "messages
// from peer with id ≤ upto are read", which only moves forward, so unread counts are a range count.
import CairnChat
import CairnCore
import GRDB

extension SQLiteStore: ChatStore {
    /// Stores a message.
    public func saveMessage(from: Int64, to: Int64, text: String, at ts: Int64) async throws -> ChatMessage {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO chat_messages (user_a, user_b, from_id, text, ts) VALUES (?, ?, ?, ?, ?)
                    """, arguments: [min(from, to), max(from, to), from, text, ts])
            return ChatMessage(id: db.lastInsertedRowID, from: from, to: to, text: text, ts: ts)
        }
    }

    /// Conversations, most recently active first.
    public func conversations(of user: Int64, limit: Int) async throws -> [ChatConversation] {
        try await pool.read { db in
            let lasts = try Row.fetchAll(
                db,
                sql: """
                    SELECT peer, MAX(id) AS last FROM (
                        SELECT user_b AS peer, id FROM chat_messages WHERE user_a = ?
                        UNION ALL
                        SELECT user_a AS peer, id FROM chat_messages WHERE user_b = ?
                    ) GROUP BY peer ORDER BY last DESC LIMIT ?
                    """, arguments: [user, user, limit])
            var result: [ChatConversation] = []
            for row in lasts {
                let peer: Int64 = row[0]
                let lastID: Int64 = row[1]
                guard let last = try Self.message(db, id: lastID) else { continue }
                result.append(
                    ChatConversation(peer: peer, last: last, unread: try Self.unread(db, reader: user, peer: peer)))
            }
            return result
        }
    }

    /// A page of a conversation, oldest first.
    public func history(of user: Int64, with peer: Int64, before: Int64?, limit: Int) async throws -> [ChatMessage] {
        try await pool.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT id, from_id, user_a, user_b, text, ts FROM chat_messages
                    WHERE user_a = ? AND user_b = ? AND id < ? ORDER BY id DESC LIMIT ?
                    """, arguments: [min(user, peer), max(user, peer), before ?? Int64.max, limit])
            return rows.map(Self.message).reversed()
        }
    }

    /// Moves the read mark forward, up to the newest message from `peer`.
    public func markRead(reader: Int64, peer: Int64, upto: Int64) async throws -> (upto: Int64, unread: Int)? {
        try await pool.write { db in
            guard
                let newest = try Int64.fetchOne(
                    db,
                    sql: """
                        SELECT MAX(id) FROM chat_messages WHERE user_a = ? AND user_b = ? AND from_id = ?
                        """, arguments: [min(reader, peer), max(reader, peer), peer])
            else { return nil }
            try db.execute(
                sql: """
                    INSERT INTO chat_reads (reader_id, peer_id, upto) VALUES (?, ?, ?)
                    ON CONFLICT (reader_id, peer_id) DO UPDATE SET upto = MAX(upto, excluded.upto)
                    """, arguments: [reader, peer, min(upto, newest)])
            let mark =
                try Int64.fetchOne(
                    db, sql: "SELECT upto FROM chat_reads WHERE reader_id = ? AND peer_id = ?",
                    arguments: [reader, peer]) ?? 0
            return (mark, try Self.unread(db, reader: reader, peer: peer))
        }
    }

    private static func unread(_ db: Database, reader: Int64, peer: Int64) throws -> Int {
        let upto =
            try Int64.fetchOne(
                db, sql: "SELECT upto FROM chat_reads WHERE reader_id = ? AND peer_id = ?",
                arguments: [reader, peer]) ?? 0
        return try Int.fetchOne(
            db,
            sql: """
                SELECT COUNT(*) FROM chat_messages WHERE user_a = ? AND user_b = ? AND from_id = ? AND id > ?
                """, arguments: [min(reader, peer), max(reader, peer), peer, upto]) ?? 0
    }

    private static func message(_ db: Database, id: Int64) throws -> ChatMessage? {
        try Row.fetchOne(
            db, sql: "SELECT id, from_id, user_a, user_b, text, ts FROM chat_messages WHERE id = ?",
            arguments: [id]
        ).map(message)
    }

    private static func message(_ row: Row) -> ChatMessage {
        let from: Int64 = row[1]
        let a: Int64 = row[2]
        let b: Int64 = row[3]
        return ChatMessage(id: row[0], from: from, to: from == a ? b : a, text: row[4], ts: row[5])
    }
}
