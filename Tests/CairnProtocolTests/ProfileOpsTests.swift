import CairnCore
import CairnHub
import CairnHubTestSupport
import CairnLoop
import CairnProtocol
import Foundation
import Synchronization
import Testing

// Profiles through the hub with in-memory stores: profile.set validates every field, leaves the stored profile
// as it was on refusal, accepts only the caller's own uploads as a photo, removes with null, and renames the live
// session; user.get shows a signed photo URL or the placeholder, to members and guests alike, and not_found for
// unknown ids.
@testable import CairnMedia

private struct FixedSigner: MediaSigner {
    func url(for media: String, now: Int64) -> String { "/v1/media/\(media)?exp=\(now + 1000)&sig=test" }
}

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct ProfileOpsTests {
    let media = String(repeating: "cd", count: 32)

    func set(_ h: HubHarness, _ connection: ConnectionID, _ fields: String) async throws -> [String: Any] {
        try await h.request(connection, #"{"id":4,"op":"profile.set",\#(fields)}"#, id: 4, completions: 1)
    }

    func get(_ h: HubHarness, _ connection: ConnectionID, _ user: Int64) async throws -> [String: Any] {
        try await h.request(connection, #"{"id":5,"op":"user.get","user":\#(user)}"#, id: 5, completions: 1)
    }

    func user(_ reply: [String: Any]) throws -> [String: Any] {
        try #require(reply["user"] as? [String: Any], "no user in \(reply)")
    }

    @Test func setChangesNameBioAndPhotoAndGetShowsThem() async throws {
        let h = HubHarness()
        h.hub.mediaSigner = FixedSigner()
        let alice = try await h.user(1, "alice")
        _ = try await h.user(2, "bob")
        h.store.addMedia(media, owner: alice)
        let reply = try user(
            try await set(h, 1, #""name":"  Alice A. ","bio":" Climbs rocks. ","photo":"\#(media)""#))
        #expect(reply["id"] as? Int == Int(alice))
        #expect(reply["username"] as? String == "alice")
        #expect(reply["name"] as? String == "Alice A.")
        #expect(reply["bio"] as? String == "Climbs rocks.")
        #expect((reply["photo_url"] as? String)?.hasPrefix("/v1/media/\(media)?") == true)
        #expect(reply["placeholder_url"] == nil)
        let seen = try user(try await get(h, 2, alice))
        #expect(seen["name"] as? String == "Alice A.")
        #expect(seen["bio"] as? String == "Climbs rocks.")
        #expect((seen["photo_url"] as? String)?.hasPrefix("/v1/media/\(media)?") == true)
        // The live session carries the new name.
        let me = try await h.request(1, #"{"id":6,"op":"whoami"}"#, id: 6)
        #expect((me["user"] as? [String: Any])?["name"] as? String == "Alice A.")
        // Absent fields are kept; null removes the photo and the bio.
        let kept = try user(try await set(h, 1, #""name":"Alice""#))
        #expect(kept["bio"] as? String == "Climbs rocks.")
        #expect(kept["photo_url"] is String)
        let removed = try user(try await set(h, 1, #""photo":null,"bio":null"#))
        #expect(removed["bio"] == nil)
        #expect(removed["photo_url"] is NSNull)
        #expect(removed["placeholder_url"] as? String == Placeholders.user)
        #expect(h.store.state.withLock { $0.profiles[alice]?.photo } == nil)
    }

    @Test func aUserWithoutPhotoGetsThePlaceholder() async throws {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        let seen = try user(try await get(h, 1, alice))
        #expect(seen["name"] as? String == "alice")
        #expect(seen["bio"] == nil)
        #expect(seen["photo_url"] is NSNull)
        #expect(seen["placeholder_url"] as? String == "/v1/placeholder/user.svg")
    }

    @Test func setRefusesBadFieldsAndChangesNothing() async throws {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        _ = try await set(h, 1, #""bio":"before""#)
        for fields in [
            #""name":"   ""#, #""name":null"#, #""name":"\#(String(repeating: "n", count: 200))""#,
            #""name":"a\u0007b""#, #""bio":"\#(String(repeating: "é", count: 251))""#, #""bio":"line\nbreak""#,
            #""bio":42"#, #""photo":"nothex""#, #""photo":7"#,
        ] {
            let reply = try await h.request(1, #"{"id":4,"op":"profile.set",\#(fields)}"#, id: 4, completions: 0)
            #expect(errorCode(reply) == "bad_request", "\(fields.prefix(60)) gave \(reply)")
        }
        // Exactly 500 bytes is allowed.
        let long = String(repeating: "é", count: 250)
        let accepted = try user(try await set(h, 1, #""bio":"\#(long)""#))
        #expect(accepted["bio"] as? String == long)
        #expect(h.store.state.withLock { $0.users[alice]?.user.name } == "alice")
    }

    @Test func onlyTheCallersOwnUploadCanBeTheirPhoto() async throws {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        h.store.addMedia(media, owner: bob)
        let refused = try await set(h, 1, #""name":"Changed","photo":"\#(media)""#)
        #expect(errorCode(refused) == "not_found")
        // Nothing of the refused change was applied.
        #expect(h.store.state.withLock { $0.users[alice]?.user.name } == "alice")
        #expect(h.store.state.withLock { $0.profiles[alice]?.photo } == nil)
    }

    @Test func getAnswersNotFoundForUnknownUsersAndServesGuests() async throws {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        #expect(errorCode(try await get(h, 1, 999)) == "not_found")
        let zero = try await h.request(1, #"{"id":5,"op":"user.get","user":0}"#, id: 5)
        #expect(errorCode(zero) == "bad_request")
        // A guest may read a member, and a member a guest, by id.
        h.router.connectionOpened(7, token: nil)
        let guestReply = try await h.request(7, #"{"id":1,"op":"guest"}"#, id: 1, completions: 1)
        let guest = Int64(try #require((guestReply["user"] as? [String: Any])?["id"] as? Int))
        #expect(try user(try await get(h, 7, alice))["username"] as? String == "alice")
        #expect(try user(try await get(h, 1, guest))["id"] as? Int == Int(guest))
    }

    @Test func bothOpsNeedAnAccount() async throws {
        let h = HubHarness()
        h.router.connectionOpened(9, token: nil)
        let set = try await h.request(9, #"{"id":4,"op":"profile.set","bio":"x"}"#, id: 4)
        #expect(errorCode(set) == "unauthorized")
        let get = try await h.request(9, #"{"id":5,"op":"user.get","user":1}"#, id: 5)
        #expect(errorCode(get) == "unauthorized")
    }
}
