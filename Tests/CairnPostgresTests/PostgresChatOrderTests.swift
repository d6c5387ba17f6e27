import CairnCore
import CairnSQL
// A conversation's message ids commit in id order across connections (and so across nodes): a message whose id was
// handed out first is committed first, or a reader paging with `id < before`, or marking read up to the newest id it
// saw, would skip it. The check: while one transaction holds an inserted, uncommitted message, another node's
// `saveMessage` for the same conversation waits (PostgreSQL shows it waiting on the conversation's lock) and gets the
// higher id only after the first committed.
import CairnTestSupport
import Foundation
import Testing

@testable import CairnPostgres

@Suite(.enabled(if: PostgresServerProcess.isAvailable, "PostgreSQL is not installed"), .timeLimit(.minutes(5)))
struct PostgresChatOrderTests {
    @Test func aMessageWaitsForTheConversationsEarlierInsertToCommit() async throws {
        let url = try PostgresServerProcess.freshURL()
        let store = try PostgresStore(url: url, connections: 2)
        defer { store.close() }
        let users = try await store.pool.write { db in
            try ["ann", "ben"].map { name in
                try db.scalar(
                    "INSERT INTO users (username, name, created_at) VALUES (?, ?, 0) RETURNING id", [name, name],
                    as: Int64.self)!
            }
        }
        let (ann, ben) = (users[0], users[1])
        // The first writer: lock, insert, and hold the transaction open.
        let first = try PostgresConnection(url: url)
        try first.execute("BEGIN")
        _ = try first.rows("SELECT pg_advisory_xact_lock(?)", [PostgresStore.conversationLock(ann, ben)])
        let firstID = try #require(
            try first.scalar(
                "INSERT INTO chat_messages (user_a, user_b, from_id, text, ts) VALUES (?, ?, ?, 'one', 1) RETURNING id",
                [ann, ben, ann], as: Int64.self))

        let second = Task { try await store.saveMessage(from: ben, to: ann, text: "two", at: 2) }
        // It waits on the conversation's lock (seen by the server), not on luck.
        let watcher = try PostgresConnection(url: url)
        let deadline = Date().addingTimeInterval(20)
        var waiting = false
        let key = PostgresStore.conversationLock(ann, ben)
        while !waiting && Date() < deadline {
            // A bigint advisory key shows as classid (high half) and objid (low half), objsubid 1.
            let waiters = try watcher.scalar(
                """
                SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objsubid = 1
                  AND ((classid::bigint << 32) | objid::bigint) = ?
                """, [key], as: Int.self)
            waiting = (waiters ?? 0) > 0
            if !waiting { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(waiting, "the second insert did not wait for the first to commit")
        try first.execute("COMMIT")
        let saved = try await second.value
        #expect(saved.id > firstID)
        let history = try await store.history(of: ann, with: ben, before: nil, limit: 10)
        #expect(history.map(\.text).sorted() == ["one", "two"])
    }
}
