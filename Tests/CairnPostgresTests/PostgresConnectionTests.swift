// The PostgreSQL connection layer against a real server: placeholders numbered outside quotes, values round-tripped
// through the text format (bytes, doubles, NULLs, arrays), typed server errors with their SQLSTATE and constraint,
// SERIALIZABLE writes retried when two transactions collide, migrations applied once, and an unreachable server
// reported as a connection error.
import CairnCrypto
import CairnTestSupport
import Foundation
import Testing

@testable import CairnPostgres

@Suite(.enabled(if: PostgresServerProcess.isAvailable, "PostgreSQL is not installed"), .timeLimit(.minutes(5)))
struct PostgresConnectionTests {
    @Test func placeholdersAreNumberedOutsideQuotedText() {
        #expect(PostgresConnection.number("SELECT ?, '?', \"a?\", ?") == "SELECT $1, '?', \"a?\", $2")
        #expect(PostgresConnection.number("a = ? AND b IN ('x''?', ?)") == "a = $1 AND b IN ('x''?', $2)")
    }

    @Test func valuesRoundTripThroughTheTextFormat() throws {
        let db = try PostgresConnection(url: try PostgresServerProcess.freshURL())
        try db.execute("CREATE TABLE v (i BIGINT, d DOUBLE PRECISION, t TEXT, b BYTEA, f BOOLEAN)")
        let bytes: [UInt8] = [0, 1, 0x7F, 0x80, 0xFF]
        try db.execute(
            "INSERT INTO v VALUES (?, ?, ?, ?, ?)", [Int64.min, 0.1 + 0.2, "it's \"é\" ?", PostgresBytes(bytes), true])
        try db.execute("INSERT INTO v VALUES (?, ?, ?, ?, ?)", [nil, nil, nil, nil, false])
        let rows = try db.rows("SELECT i, d, t, b, f FROM v ORDER BY i NULLS LAST")
        #expect(rows.count == 2)
        #expect(rows[0][0] as Int64 == Int64.min)
        #expect(rows[0][1] as Double == 0.1 + 0.2)
        #expect(rows[0]["t"] as String == "it's \"é\" ?")
        #expect(rows[0][3] as [UInt8] == bytes)
        #expect(rows[0][4] as Bool)
        #expect(rows[1][0] as Int64? == nil)
        #expect(rows[1][2] as String? == nil)
        #expect(rows[1][4] as Bool == false)
        let ids = try db.scalars(
            "SELECT x FROM unnest(?::bigint[]) AS x WHERE x = ANY(?::bigint[]) ORDER BY x",
            [PostgresIntArray([3, 1, 2]), PostgresIntArray([1, 3, 9])], as: Int64.self)
        #expect(ids == [1, 3])
        let names = try db.scalars(
            "SELECT x FROM unnest(?::text[]) AS x ORDER BY x", [PostgresTextArray(["b\"", "a\\", "c,d"])],
            as: String.self)
        #expect(names == ["a\\", "b\"", "c,d"])
        // Several arrays, NULLs included, insert a batch of rows in one statement.
        try db.execute(
            "INSERT INTO v (i, d, t) SELECT * FROM unnest(?::bigint[], ?::float8[], ?::text[])",
            [PostgresArray<Int64>([7, 8]), PostgresArray<Double>([1.5, nil]), PostgresArray<String>(["x,\"y", nil])])
        let batch = try db.rows("SELECT d, t FROM v WHERE i IN (7, 8) ORDER BY i")
        #expect(batch.map { $0[0] as Double? } == [1.5, nil])
        #expect(batch.map { $0[1] as String? } == ["x,\"y", nil])
    }

    @Test func arrayElementsAreEscapedScalarByScalar() throws {
        // A quote or backslash right after a prepended concatenation mark (U+0600) or a combining accent is one
        // Character with it: escaped per Character it would end the element early and shift the rest of the text
        // into other elements (a place attribute's value into another key).
        let db = try PostgresConnection(url: try PostgresServerProcess.freshURL())
        let tricky = ["\u{600}\",\"evil", "a\u{600}\\", "e\u{301}\"", "\u{600}\\\u{600}\""]
        // Two backslashes of the values, and one before each of their four quotes and two backslashes.
        #expect(PostgresTextArray(tricky).postgresText.unicodeScalars.filter { $0 == "\\" }.count == 8)
        let back = try db.scalars(
            "SELECT x FROM unnest(?::text[]) WITH ORDINALITY AS a(x, n) ORDER BY n", [PostgresTextArray(tricky)],
            as: String.self)
        #expect(back == tricky)
        let texts = try db.scalars(
            "SELECT x FROM unnest(?::text[]) WITH ORDINALITY AS a(x, n) ORDER BY n",
            [PostgresArray<String>(tricky.map { Optional($0) })], as: String.self)
        #expect(texts == tricky)
        #expect(PostgresConnection.number("SELECT '\u{600}', ?") == "SELECT '\u{600}', $1")
    }

    @Test func aTextWithANulIsRefusedNotCutShort() throws {
        let db = try PostgresConnection(url: try PostgresServerProcess.freshURL())
        try db.execute("CREATE TABLE t (t TEXT)")
        #expect(throws: PostgresError.self) { try db.execute("INSERT INTO t VALUES (?)", ["ab\u{0}cd"]) }
        #expect(try db.scalar("SELECT count(*) FROM t", as: Int64.self) == 0)
        #expect(try db.scalar("SELECT ?::text", ["ab\u{1}cd"], as: String.self) == "ab\u{1}cd")
    }

    @Test func serverErrorsCarryTheirStateAndConstraint() throws {
        let db = try PostgresConnection(url: try PostgresServerProcess.freshURL())
        try db.execute("CREATE TABLE u (name TEXT CONSTRAINT u_name UNIQUE)")
        try db.execute("INSERT INTO u VALUES (?)", ["a"])
        do {
            try db.execute("INSERT INTO u VALUES (?)", ["a"])
            Issue.record("a duplicate was accepted")
        } catch let error as PostgresError {
            #expect(error.isUniqueViolation("u_name"))
            #expect(!error.isUniqueViolation("other"))
        }
        #expect(throws: PostgresError.self) { try db.execute("SELECT * FROM missing") }
        // The connection stays usable after an error.
        #expect(try db.scalar("SELECT count(*) FROM u", as: Int64.self) == 1)
    }

    @Test func collidingSerializableWritesAreRetriedAndBothCommit() async throws {
        let url = try PostgresServerProcess.freshURL()
        let pool = try PostgresPool(url: url, size: 4)
        defer { pool.close() }
        try await pool.write { db in
            try db.executeScript("CREATE TABLE c (n BIGINT NOT NULL); INSERT INTO c VALUES (0)")
        }
        // Read-then-write increments from four connections at once: under SERIALIZABLE, the losers of each
        // collision fail with 40001 and are run again, so no increment is lost.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    try await pool.write { db in
                        let n: Int64 = try db.scalar("SELECT n FROM c")!
                        try db.execute("UPDATE c SET n = ?", [n + 1])
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await pool.read { try $0.scalar("SELECT n FROM c", as: Int64.self) } == 40)
    }

    @Test func migrationsAreAppliedOnceAndRecorded() throws {
        let url = try PostgresServerProcess.freshURL()
        let first = try PostgresStore(url: url, connections: 1)
        first.close()
        let second = try PostgresStore(url: url, connections: 1)
        defer { second.close() }
        #expect(second.migrations == PostgresSchema.migrations.map(\.name))
    }

    @Test func theAdminUserListReadsUsernamesInByteOrderFromAnIndex() throws {
        let url = try PostgresServerProcess.freshURL()
        let store = try PostgresStore(url: url, connections: 1)
        defer { store.close() }
        // A table this small is read by a scan when the planner may; forbidding scans shows an index can serve the
        // admin list's order and keyset (`username COLLATE "C" > ?`) at all.
        let plan = try store.pool.read { db in
            try db.executeScript("SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off")
            return try db.rows(
                #"EXPLAIN SELECT id FROM users u WHERE u.username COLLATE "C" > ? ORDER BY u.username COLLATE "C""#
                    + " LIMIT 50",
                ["m"]
            ).compactMap { $0[0] as String? }.joined(separator: "\n")
        }
        #expect(plan.contains("users_username_c"), "\(plan)")
        #expect(!plan.contains("Sort"), "\(plan)")
    }

    @Test func theFirstNodeCreatesASharedSecretAndEveryOtherReadsIt() throws {
        struct Fixed: RandomSource {
            let byte: UInt8
            func bytes(_ count: Int) -> [UInt8] { [UInt8](repeating: byte, count: count) }
        }
        let url = try PostgresServerProcess.freshURL()
        let a = try PostgresStore(url: url, connections: 1)
        defer { a.close() }
        let b = try PostgresStore(url: url, connections: 1)
        defer { b.close() }
        let first = try a.sharedSecret(name: "media", length: 32, random: Fixed(byte: 1))
        #expect(first == [UInt8](repeating: 1, count: 32))
        #expect(try b.sharedSecret(name: "media", length: 32, random: Fixed(byte: 2)) == first)
        #expect(try b.sharedSecret(name: "other", length: 4, random: Fixed(byte: 3)) == [3, 3, 3, 3])
    }

    @Test func nodesMigratingAtOnceApplyTheSchemaOnce() async throws {
        let url = try PostgresServerProcess.freshURL()
        let opened = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<3 {
                group.addTask {
                    let store = try PostgresStore(url: url, connections: 1)
                    defer { store.close() }
                    return store.migrations
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(opened.count == 3)
        #expect(opened.allSatisfy { $0 == PostgresSchema.migrations.map(\.name) })
    }

    @Test func aConnectionTheServerDroppedIsReplacedBeforeTheNextTransaction() async throws {
        let url = try PostgresServerProcess.freshURL()
        let name = "dropped-\(UUID().uuidString.prefix(8))"
        let pool = try PostgresPool(url: url + "&application_name=\(name)", size: 2)
        defer { pool.close() }
        let admin = try PostgresConnection(url: url)
        // Every connection of the pool (and only those: other tests share the server) is terminated by the server,
        // as a restart would.
        try await pool.read { _ in }
        let terminated = try admin.rows(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ?", [name])
        #expect(terminated.count == 2)
        for _ in 0..<4 {
            #expect(try await pool.read { try $0.scalar("SELECT 1", as: Int64.self) } == 1)
        }
    }

    @Test func theSessionIsSetForTheTextFormat() throws {
        let db = try PostgresConnection(url: try PostgresServerProcess.freshURL())
        #expect(try db.scalar("SHOW client_encoding", as: String.self) == "UTF8")
        #expect(try db.scalar("SHOW bytea_output", as: String.self) == "hex")
        #expect(try db.scalar("SHOW extra_float_digits", as: String.self) == "3")
        #expect(try db.scalar("SELECT ?::float8", [Double.pi], as: Double.self) == Double.pi)
    }

    @Test func passwordsAreLeftOutOfTheLoggedURL() {
        #expect(
            PostgresStore.redact("postgresql://cairn:s3cret@10.0.0.6:5432/cairn")
                == "postgresql://cairn:***@10.0.0.6:5432/cairn")
        #expect(
            PostgresStore.redact("postgresql://10.0.0.6/cairn?user=cairn&password=s3cret&sslmode=require")
                == "postgresql://10.0.0.6/cairn?user=cairn&password=***&sslmode=require")
        #expect(PostgresStore.redact("postgresql://cairn@10.0.0.6/cairn") == "postgresql://cairn@10.0.0.6/cairn")
    }

    @Test func anUnreachableServerIsAConnectionError() throws {
        #expect {
            _ = try PostgresConnection(url: "postgresql://cairn@127.0.0.1:1/postgres?connect_timeout=2")
        } throws: { error in
            guard case .connection = error as? PostgresError else { return false }
            return true
        }
    }
}
