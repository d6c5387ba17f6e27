// A search ignores case the same way on both engines: a display name that starts with a capital letter outside
// ASCII ("Émile") is found by its lower-case prefix ("é") on SQLite as on PostgreSQL.
import CairnCore
import CairnProfiles
import CairnSessions
import CairnSocial
import Testing

@Suite(.timeLimit(.minutes(5)))
struct StoreSearchFoldingTests {
    @Test(arguments: StoreEngine.available)
    func aNonASCIICapitalIsFoundByItsLowerCase(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            let me = try await store.createUser(
                NewUser(username: "me", name: "Me", passwordHash: nil, isGuest: false, createdAt: 1))
            _ = try await store.createUser(
                NewUser(username: "emile", name: "Émile", passwordHash: nil, isGuest: false, createdAt: 1))
            let found = try await store.searchUsers(prefix: "é", excluding: me.id, limit: 20)
            #expect(found.map(\.username) == ["emile"])
        }
    }
}

/// The folded name is kept as names change, and made for names stored before it existed.
@Suite(.timeLimit(.minutes(5)))
struct StoreSearchFoldingKeptTests {
    @Test(arguments: StoreEngine.available)
    func aRenamedUserIsFoundByTheNewNameOnly(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            let me = try await store.createUser(
                NewUser(username: "me", name: "Me", passwordHash: nil, isGuest: false, createdAt: 1))
            let other = try await store.createUser(
                NewUser(username: "x1", name: "Émile", passwordHash: nil, isGuest: false, createdAt: 1))
            _ = try await store.updateProfile(userID: other.id, ProfileChange(name: "Ülrich"))
            #expect(try await store.searchUsers(prefix: "ü", excluding: me.id, limit: 20).map(\.username) == ["x1"])
            #expect(try await store.searchUsers(prefix: "é", excluding: me.id, limit: 20).isEmpty)
        }
    }

    @Test(arguments: StoreEngine.available)
    func namesStoredBeforeTheMigrationAreFolded(engine: StoreEngine) async throws {
        let rows = [
            "INSERT INTO users (username, name, is_guest, created_at) VALUES ('x1', 'ÉMILE', false, 1)",
            "INSERT INTO users (username, name, is_guest, created_at) VALUES ('x2', 'Ölaf', false, 1)",
        ]
        try await engine.withLegacyStore(
            sqliteUpTo: "v23-event-pictures-unplaced", postgresMigrations: 4, rows: rows
        ) { store in
            let emile = try await store.searchUsers(prefix: "émi", excluding: 0, limit: 20)
            let olaf = try await store.searchUsers(prefix: "Ö", excluding: 0, limit: 20)
            #expect(emile.map(\.username) == ["x1"])
            #expect(olaf.map(\.username) == ["x2"])
        }
    }
}
