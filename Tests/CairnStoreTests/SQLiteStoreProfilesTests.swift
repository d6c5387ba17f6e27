// Profiles on both engines: a change is applied whole or not at all, the photo must be an upload of the user, null
// removes, it survives reopening, and the media collector keeps media used as a photo (and collects it once the
// photo is removed).
import CairnCore
import CairnMedia
import CairnProfiles
import CairnSessions
import Foundation
import Testing

@Suite(.timeLimit(.minutes(5)))
struct SQLiteStoreProfilesTests {
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 4, 5, 6]

    private func user(_ store: any EngineStore, _ name: String) async throws -> Int64 {
        try await store.createUser(NewUser(username: name, name: name, passwordHash: nil, isGuest: false, createdAt: 1))
            .id
    }

    @Test(arguments: StoreEngine.available)
    func aChangeIsStoredWholeAndSurvivesReopening(engine: StoreEngine) async throws {
        try await engine.withReopening { open in
            let store = try open()
            let alice = try await user(store, "alice")
            let bob = try await user(store, "bob")
            let photo = try await store.storeMedia(
                bytes: Self.png, owner: alice, contentType: "image/png", createdAt: 1, quotaBytes: nil)
            #expect(
                try await store.profile(id: alice)
                    == Profile(
                        user: User(
                            id: alice, username: "alice", name: "alice",
                            isGuest: false)))
            // Bob cannot use Alice's upload: nothing of his change is written.
            await #expect(throws: ProfileStoreError.mediaNotFound) {
                _ = try await store.updateProfile(userID: bob, ProfileChange(name: "Robert", photo: .some(photo)))
            }
            #expect(try await store.profile(id: bob)?.user.name == "bob")
            let changed = try await store.updateProfile(
                userID: alice, ProfileChange(name: "Alice", bio: .some("hi"), photo: .some(photo)))
            #expect(changed?.user.name == "Alice")
            #expect(changed?.bio == "hi")
            #expect(changed?.photo == photo)
            #expect(try await store.updateProfile(userID: 999, ProfileChange(bio: .some("x"))) == nil)
            #expect(try await store.profile(id: 999) == nil)
            store.closeForTest()
            let reopened = try open()
            #expect(try await reopened.profile(id: alice) == changed)
            let cleared = try await reopened.updateProfile(
                userID: alice, ProfileChange(bio: .some(nil), photo: .some(nil)))
            #expect(cleared == Profile(user: User(id: alice, username: "alice", name: "Alice", isGuest: false)))
        }
    }

    @Test(arguments: StoreEngine.available)
    func theCollectorKeepsMediaUsedAsAProfilePhoto(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            let alice = try await user(store, "alice")
            let photo = try await store.storeMedia(
                bytes: Self.png, owner: alice, contentType: "image/png", createdAt: 1, quotaBytes: nil)
            _ = try await store.updateProfile(userID: alice, ProfileChange(photo: .some(photo)))
            #expect(try await store.collectGarbageMedia(uploadedBefore: .max) == 0)
            #expect(try await store.mediaExists(id: photo, owner: alice))
            _ = try await store.updateProfile(userID: alice, ProfileChange(photo: .some(nil)))
            #expect(try await store.collectGarbageMedia(uploadedBefore: .max) == 1)
            #expect(try await store.mediaExists(id: photo, owner: alice) == false)
        }
    }
}
