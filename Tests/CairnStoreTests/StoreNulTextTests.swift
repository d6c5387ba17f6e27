// Text with U+0000 (a JSON string may carry it escaped, `\u0000`) reads and writes the same on both engines: SQLite
// stores it, PostgreSQL's text type refuses it, so a request that passes it down must not turn into a storage
// failure on one engine only.
import CairnCore
import CairnSessions
import CairnSocial
import Testing

@Suite(.timeLimit(.minutes(5)))
struct StoreNulTextTests {
    @Test(arguments: StoreEngine.available)
    func aSearchForTextWithNulIsAnAnswerNotAFailure(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            let me = try await store.createUser(
                NewUser(username: "me", name: "Me", passwordHash: nil, isGuest: false, createdAt: 1))
            let found = try await store.searchUsers(prefix: "m\u{0}", excluding: me.id, limit: 20)
            #expect(found.isEmpty)
        }
    }
}
