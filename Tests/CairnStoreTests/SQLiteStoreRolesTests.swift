// Roles on both engines: granting and revoking by username, idempotently; unknown users are a typed error that
// changes nothing; the check the hub makes sees changes made through another store instance on the same data, as
// `cairn user grant-ops` does beside a running hub (or, with PostgreSQL, another node). The migration's name is
// SQLite's own.
import CairnCore
import CairnSessions
import Foundation
import Testing

@testable import CairnStore

@Suite(.timeLimit(.minutes(5)))
struct SQLiteStoreRolesTests {
    func newUser(_ store: any EngineStore, _ name: String) async throws -> User {
        try await store.createUser(NewUser(username: name, name: name, passwordHash: nil, isGuest: false, createdAt: 1))
    }

    @Test func theRolesMigrationIsApplied() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SQLiteStore(directory: dir)
        #expect(try store.appliedMigrations().contains("v5-roles"))
        try store.close()
    }

    @Test(arguments: StoreEngine.available)
    func grantAndRevokeAreIdempotentAndChecked(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            let alice = try await newUser(store, "alice")
            let bob = try await newUser(store, "bob")
            #expect(try await store.hasRole(.ops, userID: alice.id) == false)
            #expect(try store.grantRole(.ops, username: "alice", at: 10) == true)
            #expect(try store.grantRole(.ops, username: "alice", at: 11) == false)
            #expect(try await store.hasRole(.ops, userID: alice.id) == true)
            #expect(try await store.hasRole(.ops, userID: bob.id) == false)
            #expect(try await store.hasRole(.admin, userID: alice.id) == false)
            #expect(try store.usernames(withRole: .ops) == ["alice"])
            #expect(try store.revokeRole(.ops, username: "alice") == true)
            #expect(try store.revokeRole(.ops, username: "alice") == false)
            #expect(try await store.hasRole(.ops, userID: alice.id) == false)
        }
    }

    @Test(arguments: StoreEngine.available)
    func usernamesWithARoleAreSortedBytewise(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            for name in ["bob", "Zoe", "alice", "_ops"] {
                _ = try await newUser(store, name)
                _ = try store.grantRole(.admin, username: name, at: 1)
            }
            #expect(try store.usernames(withRole: .admin) == ["Zoe", "_ops", "alice", "bob"])
            #expect(try store.usernames(withRole: .ops).isEmpty)
        }
    }

    @Test(arguments: StoreEngine.available)
    func anUnknownUsernameIsATypedErrorAndChangesNothing(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            #expect(throws: RoleStoreError.noSuchUser("nobody")) {
                try store.grantRole(.ops, username: "nobody", at: 1)
            }
            #expect(throws: RoleStoreError.noSuchUser("nobody")) { try store.revokeRole(.ops, username: "nobody") }
            let holders = try store.usernames(withRole: .ops)
            #expect(holders.isEmpty)
        }
    }

    @Test(arguments: StoreEngine.available)
    func aGrantThroughAnotherConnectionIsSeenAtOnce(engine: StoreEngine) async throws {
        try await engine.withReopening { open in
            let serving = try open()
            let carol = try await newUser(serving, "carol")
            #expect(try await serving.hasRole(.ops, userID: carol.id) == false)
            let admin = try open()
            _ = try admin.grantRole(.ops, username: "carol", at: 5)
            admin.closeForTest()
            #expect(try await serving.hasRole(.ops, userID: carol.id) == true)
        }
    }
}
