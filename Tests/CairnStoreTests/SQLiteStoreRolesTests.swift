// Roles in SQLite (migration v5-roles): granting and revoking by username, idempotently; unknown users are a
// typed error that changes nothing; the check the hub makes sees changes made through another store instance on
// the same file, as `cairn user grant-ops` does beside a running hub.
import CairnDomain
import Foundation
import Testing

@testable import CairnStore

struct SQLiteStoreRolesTests {
    func newUser(_ store: SQLiteStore, _ name: String) async throws -> User {
        try await store.createUser(NewUser(username: name, name: name, passwordHash: nil, isGuest: false, createdAt: 1))
    }

    @Test func theRolesMigrationIsApplied() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SQLiteStore(directory: dir)
        #expect(try store.appliedMigrations().contains("v5-roles"))
        try store.close()
    }

    @Test func grantAndRevokeAreIdempotentAndChecked() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SQLiteStore(directory: dir)
        let alice = try await newUser(store, "alice")
        let bob = try await newUser(store, "bob")
        #expect(try await store.hasRole(.ops, userID: alice.id) == false)
        #expect(try store.grantRole(.ops, username: "alice", at: 10) == true)
        #expect(try store.grantRole(.ops, username: "alice", at: 11) == false)
        #expect(try await store.hasRole(.ops, userID: alice.id) == true)
        #expect(try await store.hasRole(.ops, userID: bob.id) == false)
        #expect(try store.usernames(withRole: .ops) == ["alice"])
        #expect(try store.revokeRole(.ops, username: "alice") == true)
        #expect(try store.revokeRole(.ops, username: "alice") == false)
        #expect(try await store.hasRole(.ops, userID: alice.id) == false)
        try store.close()
    }

    @Test func anUnknownUsernameIsATypedErrorAndChangesNothing() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SQLiteStore(directory: dir)
        #expect(throws: RoleStoreError.noSuchUser("nobody")) { try store.grantRole(.ops, username: "nobody", at: 1) }
        #expect(throws: RoleStoreError.noSuchUser("nobody")) { try store.revokeRole(.ops, username: "nobody") }
        #expect(try store.usernames(withRole: .ops).isEmpty)
        try store.close()
    }

    @Test func aGrantThroughAnotherConnectionIsSeenAtOnce() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let serving = try SQLiteStore(directory: dir)
        let carol = try await newUser(serving, "carol")
        #expect(try await serving.hasRole(.ops, userID: carol.id) == false)
        let admin = try SQLiteStore(directory: dir)
        try admin.grantRole(.ops, username: "carol", at: 5)
        try admin.close()
        #expect(try await serving.hasRole(.ops, userID: carol.id) == true)
        try serving.close()
    }
}
