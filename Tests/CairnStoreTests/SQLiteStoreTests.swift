import CairnCore
import CairnSQL
// The SQLite store: WAL mode, fsynced commits, migrations, the account operations, uniqueness, and that data
// survives reopening.
import CairnSessions
import Foundation
import Testing

@testable import CairnStore

func temporaryDirectory() -> String {
    let path = NSTemporaryDirectory() + "cairn-store-\(UUID().uuidString)"
    return path
}

@Suite(.timeLimit(.minutes(5)))
struct SQLiteStoreTests {
    @Test func opensInWALModeWithMigrationsApplied() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SQLiteStore(directory: dir)
        #expect(try store.journalMode() == "wal")
        #expect(try store.appliedMigrations().first == "v1-accounts")
        #expect(FileManager.default.fileExists(atPath: dir + "/cairn.sqlite"))
        try store.close()
    }

    @Test func theWriterCommitsWithSynchronousFull() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SQLiteStore(directory: dir)
        // 2 is FULL; GRDB's pool would leave its writer at NORMAL (1), whose commits are not fsynced.
        #expect(try store.writerSynchronousLevel() == 2)
        try store.close()
        let reopened = try SQLiteStore(directory: dir)
        #expect(try reopened.writerSynchronousLevel() == 2)
        try reopened.close()
    }

    @Test func createsTheDataDirectoryPrivately() throws {
        let dir = temporaryDirectory() + "/nested/deeper"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SQLiteStore(directory: dir)
        let attributes = try FileManager.default.attributesOfItem(atPath: dir)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
        try store.close()
    }

    @Test func refusesADataPathThatIsAFile() throws {
        let path = temporaryDirectory()
        #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: StoreOpenError.self) { _ = try SQLiteStore(directory: path) }
    }

    @Test(arguments: StoreEngine.available)
    func usersAndTokensRoundTrip(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            let user = try await store.createUser(
                NewUser(
                    username: "alice", name: "Alice", passwordHash: "scrypt$x",
                    isGuest: false, createdAt: 1))
            #expect(user.id > 0)
            let creds = try #require(try await store.credentials(username: "alice"))
            #expect(creds.user == user)
            #expect(creds.passwordHash == "scrypt$x")
            #expect(try await store.credentials(username: "nobody") == nil)

            let digest = [UInt8](repeating: 0xAB, count: 32)
            try await store.insertToken(hash: digest, userID: user.id, createdAt: 2)
            #expect(try await store.user(tokenHash: digest) == user)
            #expect(try await store.user(tokenHash: digest, issuedAfter: 2) == nil)
            #expect(try await store.user(tokenHash: [UInt8](repeating: 0, count: 32)) == nil)
            #expect(try await store.deleteToken(hash: digest))
            #expect(try await store.deleteToken(hash: digest) == false)
            #expect(try await store.user(tokenHash: digest) == nil)
        }
    }

    @Test(arguments: StoreEngine.available)
    func duplicateUsernameAndEmailAreReportedAsTaken(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            _ = try await store.createUser(
                NewUser(
                    username: "bob", name: "Bob", passwordHash: nil, isGuest: false, createdAt: 1,
                    email: "bob@example.org"))
            await #expect(throws: AccountStoreError.usernameTaken) {
                _ = try await store.createUser(
                    NewUser(username: "bob", name: "Bob 2", passwordHash: nil, isGuest: false, createdAt: 2))
            }
            await #expect(throws: AccountStoreError.emailTaken) {
                _ = try await store.createUser(
                    NewUser(
                        username: "bobby", name: "Bob 3", passwordHash: nil, isGuest: false, createdAt: 2,
                        email: "bob@example.org"))
            }
            #expect(try await store.credentials(email: "bob@example.org")?.user.username == "bob")
            #expect(try await store.credentials(username: "bobby") == nil)
        }
    }

    @Test func committedDataSurvivesReopening() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let digest = [UInt8](repeating: 0x11, count: 32)
        do {
            let store = try SQLiteStore(directory: dir)
            let user = try await store.createUser(
                NewUser(
                    username: "carol", name: "Carol", passwordHash: nil,
                    isGuest: true, createdAt: 1))
            try await store.insertToken(hash: digest, userID: user.id, createdAt: 1)
            try store.close()
        }
        let reopened = try SQLiteStore(directory: dir)
        let user = try #require(try await reopened.user(tokenHash: digest))
        #expect(user.username == "carol")
        #expect(user.isGuest)
        #expect(
            try reopened.appliedMigrations() == [
                "v1-accounts", "v2-friends-positions", "v3-share-rule-versions",
                "v4-media-relics-chat", "v5-roles", "v6-relic-creator-hidden",
                "v7-position-history-ts", "v8-users-last-seen", "v9-profiles", "v10-buckets", "v11-trackers",
                "v12-item-privacy-alerts-safe-zones", "v14-tracker-filter-state", "v13-tracker-key-index",
                "v15-tracker-shows-items", "v17-accounts-email-admin", "v18-places", "v20-admin-settings",
                "v19-pictures-events", "v21-picture-posts", "v22-tracker-paired-by", "v23-event-pictures-unplaced",
                "v24-users-name-folded",
            ])
        try reopened.close()
    }
}
