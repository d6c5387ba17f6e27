// What the engine-neutral tests of buckets, trackers, safe zones and admin need beyond the domain ports: a database
// that can be opened again (as after a restart), the start-time loaders the app calls on either store, and raw SQL
// for setting up rows that belong to ports these tests are not about (media, friendships, roles, relics, pictures),
// and the bulk inserts of fixtures and benchmarks.
import CairnAdmin
import CairnBuckets
import CairnCore
import CairnSQL
import CairnSessions
import CairnTestSupport
import CairnTrackers
import Foundation
import GRDB

@testable import CairnPostgres
@testable import CairnStore

/// What both stores offer outside the domain ports, as these tests use it.
protocol EngineExtras {
    func loadItemAlerts() throws -> [ItemAlertRecord]
    func loadSafeZones() throws -> [SafeZone]
    func loadTrackerPositions() throws -> [ItemPosition]
    func loadAdminSettingsNow() throws -> [String: String]
    var accountDailyStats: any DailyStatsProvider { get }
    /// Runs a statement (integer arguments only) in its own transaction.
    func execute(_ sql: String, _ arguments: [Int64]) async throws
    /// The first column of every row of a query.
    func int64s(_ sql: String) async throws -> [Int64]
    /// Transactions begun by the tracker reports' group commit.
    var trackerReportTransactions: Int { get }
    /// Many accounts in one transaction (benchmarks).
    func createUsers(_ users: [NewUser]) async throws -> [User]
    /// Generated accounts, tokens and friendships in one transaction (`cairn seed`).
    func insertFixtures(users: [FixtureUser], friendships: [(Int, Int)], createdAt: Int64) async throws -> [Int64]
}

extension SQLiteStore: EngineExtras {
    func execute(_ sql: String, _ arguments: [Int64]) async throws {
        try await pool.write { db in try db.execute(sql: sql, arguments: StatementArguments(arguments)) }
    }

    func int64s(_ sql: String) async throws -> [Int64] {
        try await pool.read { db in try Int64.fetchAll(db, sql: sql) }
    }

    var trackerReportTransactions: Int { trackerReports.transactions }
}

extension PostgresStore: EngineExtras {
    func execute(_ sql: String, _ arguments: [Int64]) async throws {
        try await pool.write { db in try db.execute(sql, PostgresArguments(arguments)) }
    }

    func int64s(_ sql: String) async throws -> [Int64] {
        try await pool.read { db in try db.scalars(sql, as: Int64.self) }
    }

    var trackerReportTransactions: Int { trackerReports.transactions }
}

/// One database of an engine, opened as often as a test likes (each store closed by the test, or at the end).
final class EngineDatabase {
    let engine: StoreEngine
    private let location: String
    private var opened: [any EngineStore] = []
    /// PostgreSQL's media copies for this database's stores (not the shared default other tests use).
    private let mediaCache = temporaryDirectory()

    init(_ engine: StoreEngine) throws {
        self.engine = engine
        location = engine == .sqlite ? temporaryDirectory() : try PostgresServerProcess.freshURL()
    }

    /// A store on the database (the same rows every time).
    func open() throws -> any EngineStore {
        let store: any EngineStore =
            switch engine {
            case .sqlite: try SQLiteStore(directory: location)
            case .postgres: try PostgresStore(url: location, connections: 2, mediaCache: mediaCache)
            }
        opened.append(store)
        return store
    }

    /// Closes `store`, as a stopping process would.
    func close(_ store: any EngineStore) {
        opened.removeAll { $0 as AnyObject === store as AnyObject }
        store.closeForTest()
    }

    fileprivate func finish() {
        for store in opened { store.closeForTest() }
        opened = []
        if engine == .sqlite { try? FileManager.default.removeItem(atPath: location) }
        try? FileManager.default.removeItem(atPath: mediaCache)
    }
}

extension StoreEngine {
    /// Runs `body` with a new, empty database; stores left open are closed afterwards.
    func withDatabase(_ body: (EngineDatabase) async throws -> Void) async throws {
        let database = try EngineDatabase(self)
        defer { database.finish() }
        try await body(database)
    }
}
