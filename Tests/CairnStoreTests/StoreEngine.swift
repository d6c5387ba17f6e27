// The two stores behind the same domain ports: SQLite (one node, the embedded default) and PostgreSQL (shared by
// several nodes). Tests of what a port promises run against both (`@Test(arguments: StoreEngine.available)`), so
// the engines cannot drift apart; tests of one engine's own matters (WAL, fsync, the data directory, migrations'
// names) stay with that engine. PostgreSQL runs for real (`PostgresServerProcess`), each test in a schema of its own;
// where it is not installed only SQLite runs.
import CairnAdmin
import CairnBuckets
import CairnChat
import CairnCore
import CairnMedia
import CairnPictures
import CairnPlaces
import CairnProfiles
import CairnRelics
import CairnSQL
import CairnSessions
import CairnSocial
import CairnTestSupport
import CairnTrackers
import Foundation
import GRDB
import Testing

@testable import CairnPostgres
@testable import CairnStore

/// What both stores implement, as the tests use it.
typealias EngineStore = AccountStore & PictureStore & PlaceStore & BucketStore & TrackerStore & SafeZoneStore
    & AdminStore & SocialStore & ProfileStore & RoleStore & RelicStore & ChatStore & MediaStore & EngineExtras
    & EngineProbes

/// A store engine under test.
enum StoreEngine: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case postgres

    /// The engines this machine can run.
    static var available: [StoreEngine] { PostgresServerProcess.isAvailable ? allCases : [.sqlite] }

    var testDescription: String { rawValue }

    /// Runs `body` with a new, empty store, closed afterwards.
    func withStore(_ body: (any EngineStore) async throws -> Void) async throws {
        switch self {
        case .sqlite:
            let dir = temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let store = try SQLiteStore(directory: dir)
            try await body(store)
            try store.close()
        case .postgres:
            let cache = temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: cache) }
            let store = try PostgresStore(url: try PostgresServerProcess.freshURL(), connections: 2, mediaCache: cache)
            try await body(store)
            store.close()
        }
    }

    /// Runs `body` with one new, empty database and a way to open stores on it: each call opens another instance
    /// on the same data, as after a restart or as another process (for PostgreSQL another node, with a media cache
    /// of its own). Every store opened is closed afterwards; `body` may close one itself.
    func withReopening(_ body: (_ open: @escaping () throws -> any EngineStore) async throws -> Void) async throws {
        let dir = temporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let opened = OpenedStores()
        defer { for store in opened.stores { store.closeForTest() } }
        switch self {
        case .sqlite:
            try await body {
                let store = try SQLiteStore(directory: dir)
                opened.stores.append(store)
                return store
            }
        case .postgres:
            let url = try PostgresServerProcess.freshURL()
            try await body {
                let store = try PostgresStore(
                    url: url, connections: 2, mediaCache: dir + "/node\(opened.stores.count)")
                opened.stores.append(store)
                return store
            }
        }
    }
}

extension StoreEngine {
    /// Runs `body` with a store opened on a database an older hub left: migrated up to `sqlite` (a SQLite migration's
    /// name) or through the first `postgres` migrations (PostgreSQL), then given `rows` (statements in SQL the engine
    /// takes), so the later migrations run on those rows as the store opens. The store is closed afterwards.
    func withLegacyStore(
        sqliteUpTo sqlite: String, postgresMigrations postgres: Int, rows: [String],
        _ body: (any EngineStore) async throws -> Void
    ) async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store: any EngineStore
        switch self {
        case .sqlite:
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let queue = try DatabaseQueue(path: directory + "/" + SQLiteStore.fileName)
            try Migrations.migrator.migrate(queue, upTo: sqlite)
            try await queue.write { db in for sql in rows { try db.execute(sql: sql) } }
            try queue.close()
            store = try SQLiteStore(directory: directory)
        case .postgres:
            let url = try PostgresServerProcess.freshURL()
            let pool = try PostgresPool(url: url, size: 1)
            try await pool.write { db in
                try db.execute(
                    "CREATE TABLE cairn_migrations (name TEXT PRIMARY KEY, position INTEGER NOT NULL UNIQUE, "
                        + "applied_at BIGINT NOT NULL)")
                for (position, migration) in PostgresSchema.migrations.prefix(postgres).enumerated() {
                    try db.executeScript(migration.sql)
                    try db.execute("INSERT INTO cairn_migrations VALUES (?, ?, 0)", [migration.name, position])
                }
                for sql in rows { _ = try db.execute(sql) }
            }
            pool.close()
            store = try PostgresStore(url: url, connections: 2, mediaCache: directory)
        }
        defer { store.closeForTest() }
        try await body(store)
    }
}

/// The stores `withDatabase` opened, to close.
private final class OpenedStores {
    var stores: [any EngineStore] = []
}

/// A value bound to a statement of `EngineProbes`.
enum EngineValue: Sendable {
    case int(Int64)
    case text(String)
}

/// What the engine-neutral tests reach beneath the ports: plain SQL that both engines run alike (for state no port
/// writes, or counts no port reports), and the stores' public helpers beside the ports (roles for the command line,
/// media ownership).
protocol EngineProbes {
    /// Runs a statement.
    func sqlExecute(_ sql: String, _ arguments: [EngineValue]) async throws
    /// The integer a query returns (nil for no row or NULL).
    func sqlInteger(_ sql: String, _ arguments: [EngineValue]) async throws -> Int64?
    /// Whether any of the content `id` remains (SQLite: its file; PostgreSQL: its blob or this node's copy).
    func mediaContentRemains(_ id: String) async throws -> Bool
    /// How many distinct contents are stored (files; blobs).
    func mediaContentCount() async throws -> Int
    /// Closes the store, if it is open.
    func closeForTest()

    func createUsers(_ users: [NewUser]) async throws -> [User]
    func mediaExists(id: String, owner: Int64) async throws -> Bool
    func grantRole(_ role: UserRole, username: String, at time: Int64) throws -> Bool
    func revokeRole(_ role: UserRole, username: String) throws -> Bool
    func usernames(withRole role: UserRole) throws -> [String]
}

extension EngineProbes {
    func sqlExecute(_ sql: String, _ arguments: EngineValue...) async throws { try await sqlExecute(sql, arguments) }
    func sqlInteger(_ sql: String, _ arguments: EngineValue...) async throws -> Int64? {
        try await sqlInteger(sql, arguments)
    }
}

extension SQLiteStore: EngineProbes {
    private static func arguments(_ values: [EngineValue]) -> StatementArguments {
        StatementArguments(
            values.map { value -> (any DatabaseValueConvertible)? in
                switch value {
                case .int(let int): int
                case .text(let text): text
                }
            })
    }

    func sqlExecute(_ sql: String, _ arguments: [EngineValue]) async throws {
        try await pool.write { try $0.execute(sql: sql, arguments: Self.arguments(arguments)) }
    }

    func sqlInteger(_ sql: String, _ arguments: [EngineValue]) async throws -> Int64? {
        try await pool.read { try Int64.fetchOne($0, sql: sql, arguments: Self.arguments(arguments)) }
    }

    func mediaContentRemains(_ id: String) async throws -> Bool {
        FileManager.default.fileExists(atPath: mediaFiles.path(for: id))
    }

    func mediaContentCount() async throws -> Int { mediaFiles.ids(modifiedBefore: .max).count }

    func closeForTest() { try? close() }
}

extension PostgresStore: EngineProbes {
    private static func arguments(_ values: [EngineValue]) -> PostgresArguments {
        PostgresArguments(
            values.map { value -> (any PostgresBindable)? in
                switch value {
                case .int(let int): int
                case .text(let text): text
                }
            })
    }

    func sqlExecute(_ sql: String, _ arguments: [EngineValue]) async throws {
        try await pool.write { try $0.execute(sql, Self.arguments(arguments)) }
    }

    func sqlInteger(_ sql: String, _ arguments: [EngineValue]) async throws -> Int64? {
        try await pool.read { try $0.scalar(sql, Self.arguments(arguments)) }
    }

    func mediaContentRemains(_ id: String) async throws -> Bool {
        let blob = try await sqlInteger("SELECT count(*) FROM media_blobs WHERE id = ?", .text(id)) ?? 0
        return blob > 0 || FileManager.default.fileExists(atPath: mediaCache.path(for: id))
    }

    func mediaContentCount() async throws -> Int {
        Int(try await sqlInteger("SELECT count(*) FROM media_blobs") ?? 0)
    }

    func closeForTest() { close() }
}
