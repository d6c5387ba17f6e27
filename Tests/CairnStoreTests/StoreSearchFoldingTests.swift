// A search ignores case the same way on both engines: a display name that starts with a capital letter outside
// ASCII ("Émile") is found by its lower-case prefix ("é") on SQLite as on PostgreSQL.
import CairnCore
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
