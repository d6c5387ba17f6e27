// Statements whose text depends on the request (picture search: one LIKE per word and per hashtag) must not stay
// prepared on SQLite's connections: GRDB's statement cache keeps every distinct text for the connection's life, so
// a user who searches with every count of words and hashtags would leave thousands of prepared statements on each
// reader, held until the hub stops.
import CairnCore
import CairnSQL
import CairnTestSupport
import Foundation
import GRDB
import GRDBSQLite
import Testing

@testable import CairnStore

@Suite(.timeLimit(.minutes(5)))
struct SQLiteStatementCacheTests {
    @Test func searchesOfEveryShapeDoNotGrowSQLitesMemory() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SQLiteStore(directory: dir)
        defer { try? store.close() }
        _ = try await store.searchPictures(words: ["a"], tags: [], viewer: 1, limit: 20)
        // One request at a time: every read takes the pool's first reader, the one measured.
        let before = try await Self.statementBytes(store)
        // 40 × 15 shapes: each count of words with each count of hashtags is another statement text.
        for words in 1...40 {
            for tags in 0..<15 {
                _ = try await store.searchPictures(
                    words: Array(repeating: "a", count: words), tags: Array(repeating: "b", count: tags), viewer: 1,
                    limit: 20)
            }
        }
        let grown = try await Self.statementBytes(store) - before
        #expect(grown < 1 << 20, "the reader holds \(grown) bytes more of prepared statements after 600 searches")
    }

    /// The memory the reader's prepared statements use (SQLITE_DBSTATUS_STMT_USED).
    static func statementBytes(_ store: SQLiteStore) async throws -> Int32 {
        try await store.pool.read { db in
            var current: Int32 = 0
            var highest: Int32 = 0
            sqlite3_db_status(db.sqliteConnection, SQLITE_DBSTATUS_STMT_USED, &current, &highest, 0)
            return current
        }
    }
}
