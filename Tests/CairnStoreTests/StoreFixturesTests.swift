// Generated fixtures (`cairn seed`, benchmarks) on both engines: users, a token each and friendships inserted in one
// transaction, ids returned in the order given, each friendship stored once whichever way round it is named, and a
// taken username aborting everything; and `createUsers`, the benchmarks' bulk accounts, the same way.
import CairnCore
import CairnSessions
import Foundation
import Testing

@testable import CairnStore

@Suite(.timeLimit(.minutes(5)))
struct StoreFixturesTests {
    func digest(_ n: Int) -> [UInt8] { [UInt8](repeating: UInt8(n), count: 32) }

    @Test(arguments: StoreEngine.available)
    func usersTokensAndFriendshipsAreInsertedTogether(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            let users = (0..<5).map { FixtureUser(username: "load\($0)", name: "Load \($0)", tokenHash: digest($0)) }
            let ids = try await store.insertFixtures(
                users: users, friendships: [(0, 1), (2, 1), (1, 0), (3, 4)], createdAt: 7)
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
                    users: [
                        FixtureUser(username: "fresh", name: "Fresh", tokenHash: digest(10)),
                        FixtureUser(username: "load2", name: "x", tokenHash: digest(11)),
                    ],
                    friendships: [(0, 1)], createdAt: 8)
            }
            #expect(try await store.credentials(username: "fresh") == nil)
            #expect(try await store.user(tokenHash: digest(10)) == nil)
        }
    }

    @Test(arguments: StoreEngine.available)
    func createUsersInsertsABatchInOrderOrNothing(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            let batch = (0..<300).map { (n: Int) -> NewUser in
                let hash: String? = n % 2 == 0 ? "scrypt$\(n)" : nil
                return NewUser(
                    username: "u\(n)", name: "U \(n)", passwordHash: hash, isGuest: n % 3 == 0, createdAt: Int64(n))
            }
            let users = try await store.createUsers(batch)
            #expect(users.map(\.username) == batch.map(\.username))
            #expect(users.map(\.isGuest) == batch.map(\.isGuest))
            #expect(Set(users.map(\.id)).count == 300)
            for n in [0, 1, 299] {
                let found = try #require(try await store.credentials(username: "u\(n)"))
                #expect(found.user == users[n] && found.passwordHash == batch[n].passwordHash)
            }
            await #expect(throws: AccountStoreError.usernameTaken) {
                _ = try await store.createUsers([
                    NewUser(username: "new", name: "N", passwordHash: nil, isGuest: false, createdAt: 1), batch[5],
                ])
            }
            #expect(try await store.credentials(username: "new") == nil)
        }
    }
}
