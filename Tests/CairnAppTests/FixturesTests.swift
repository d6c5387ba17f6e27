// `cairn seed`'s core: users, tokens the hub accepts, and friendships that load as the hub's graph.
import CairnApp
import CairnCore
import CairnCrypto
import CairnSQL
import CairnSeed
import CairnSessions
import CairnSocial
import CairnStore
import Foundation
import Testing

@Suite(.timeLimit(.minutes(5)))
struct FixturesTests {
    @Test func generatesUsersTokensAndFriendships() async throws {
        let dir = NSTemporaryDirectory() + "cairn-fixtures-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SQLiteStore(directory: dir)
        let file = try await Fixtures.generate(
            FixturePlan(users: 50, friends: 4, shape: .clustered), into: store,
            random: SecureRandom(), clock: SystemClock())
        #expect(file.users.count == 50)
        #expect(file.users[0].username == "load000001")
        #expect(file.users.allSatisfy { $0.friends.count == 4 })
        // Tokens resolve to their users, as `auth` would resolve them.
        for account in file.users.prefix(5) {
            let digest = try #require(Accounts.tokenDigest(account.token))
            #expect(try await store.user(tokenHash: digest)?.id == account.id)
        }
        // Friendships are what the hub restores.
        let snapshot = try store.loadSocial()
        #expect(snapshot.friendships.count == 50 / 5 * 10)
        // A second run with the same prefix is refused as a whole.
        await #expect(throws: AccountStoreError.usernameTaken) {
            _ = try await Fixtures.generate(
                FixturePlan(users: 3, friends: 1), into: store, random: SecureRandom(),
                clock: SystemClock())
        }
        try store.close()
    }
}
