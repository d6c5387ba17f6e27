// The two stores behind the same domain ports: SQLite (one node, the embedded default) and PostgreSQL (shared by
// several nodes). Tests of what a port promises run against both (`@Test(arguments: StoreEngine.available)`), so
// the engines cannot drift apart; tests of one engine's own matters (WAL, fsync, the data directory, migrations'
// names) stay with that engine. PostgreSQL runs for real (`PostgresServerProcess`), each test in a schema of its own;
// where it is not installed only SQLite runs.
import CairnDomain
import CairnPostgres
import CairnTestSupport
import Foundation
import Testing

@testable import CairnStore

/// What both stores implement, as the tests use it.
typealias EngineStore =
    AccountStore & PictureStore & PlaceStore & BucketStore & TrackerStore & SafeZoneStore & AdminStore & EngineExtras

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
            let store = try PostgresStore(url: try PostgresServerProcess.freshURL(), connections: 2)
            try await body(store)
            store.close()
        }
    }
}
