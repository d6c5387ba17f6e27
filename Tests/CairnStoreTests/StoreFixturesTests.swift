// Generated fixtures (`cairn seed`, benchmarks) on both engines: users, a token each and friendships inserted in one
// transaction, ids returned in the order given, each friendship stored once whichever way round it is named, and a
// taken username aborting everything.
import CairnDomain
import Foundation
import Testing

@testable import CairnStore

struct StoreFixturesTests {
    func digest(_ n: Int) -> [UInt8] { [UInt8](repeating: UInt8(n), count: 32) }

    @Test(arguments: StoreEngine.available)
    func usersTokensAndFriendshipsAreInsertedTogether(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            let users = (0..<5).map { (username: "load\($0)", name: "Load \($0)", tokenHash: digest($0)) }
            let ids = try await store.insertFixtures(
                users, friendships: [(0, 1), (2, 1), (1, 0), (3, 4)], createdAt: 7)
            #expect(ids.count == 5 && Set(ids).count == 5)
            for (n, id) in ids.enumerated() {
                let user = try #require(try await store.user(tokenHash: digest(n)))
                #expect(user == User(id: id, username: "load\(n)", name: "Load \(n)", isGuest: false))
                #expect(try await store.credentials(username: "load\(n)")?.passwordHash == nil)
            }
            let pairs = try await store.int64s("SELECT user_a * 1000 + user_b FROM friendships ORDER BY 1")
            let expected = [(0, 1), (1, 2), (3, 4)].map { min(ids[$0.0], ids[$0.1]) * 1000 + max(ids[$0.0], ids[$0.1]) }
            #expect(pairs == expected.sorted())
            #expect(try await store.int64s("SELECT DISTINCT created_at FROM users") == [7])

            // A username already taken aborts the whole batch.
            await #expect(throws: AccountStoreError.usernameTaken) {
                _ = try await store.insertFixtures(
                    [
                        (username: "fresh", name: "Fresh", tokenHash: digest(10)),
                        (username: "load2", name: "x", tokenHash: digest(11)),
                    ],
                    friendships: [(0, 1)], createdAt: 8)
            }
            #expect(try await store.credentials(username: "fresh") == nil)
            #expect(try await store.user(tokenHash: digest(10)) == nil)
        }
    }
}
