import CairnAdmin
import CairnCore
import CairnHub
// Live settings through the router: `admin.settings.get` / `.set` are forbidden without the admin role; a change is
// committed with an audit line per changed value (who, key, old → new) and the owning feature sees it at once (a
// chat message over the new limit is refused on the next request); one bad value (unknown key, wrong type, out of
// bounds) refuses the whole request, naming its key, with nothing changed in memory or in the store; null puts a
// setting back to its default; a setting registered later (as Pictures will) is changed the same way.
import CairnHubTestSupport
import CairnLoop
import CairnProtocol
import CairnWire
import Synchronization
import Testing

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct AdminSettingsOpsTests {
    func member(_ h: HubHarness, _ connection: ConnectionID, _ name: String, admin: Bool = false) async throws -> Int64
    {
        try await AdminOpsTests().member(h, connection, name, admin: admin)
    }

    func settings(_ reply: [String: Any]) -> [String: Any] { reply["settings"] as? [String: Any] ?? [:] }

    @Test func settingsOpsAreForbiddenWithoutTheRole() async throws {
        let h = HubHarness()
        _ = try await member(h, 1, "alice")
        let get = try await h.request(1, #"{"id":2,"op":"admin.settings.get"}"#, id: 2, completions: 1)
        #expect(errorCode(get) == "forbidden")
        let set = try await h.request(
            1, #"{"id":3,"op":"admin.settings.set","settings":{"chat_text_limit":10}}"#, id: 3, completions: 1)
        #expect(errorCode(set) == "forbidden")
        #expect(h.hub.settings.value("chat_text_limit") == .integer(4_000))
        let untouched = h.store.state.withLock { ($0.settings.count, $0.audit.count) }
        #expect(untouched == (0, 0))
    }

    @Test func aNonAdminIsForbiddenWhateverTheRequestHolds() async throws {
        let h = HubHarness()
        _ = try await member(h, 1, "alice")
        let requests = [
            #"{"id":2,"op":"admin.settings.set","settings":{"x":1}}"#,
            #"{"id":2,"op":"admin.settings.set","settings":{"chat_text_limit":0}}"#,
            #"{"id":2,"op":"admin.settings.set","settings":{"chat_text_limit":"ten"}}"#,
            #"{"id":2,"op":"admin.settings.set"}"#,
            #"{"id":2,"op":"admin.stats","days":0}"#,
            #"{"id":2,"op":"admin.users","limit":0}"#,
            #"{"id":2,"op":"admin.user.suspend","user":2,"reason":""}"#,
            #"{"id":2,"op":"admin.user.suspend"}"#,
            #"{"id":2,"op":"admin.audit","before":-1}"#,
            #"{"id":2,"op":"admin.picture.remove"}"#,
        ]
        for request in requests {
            let reply = try await h.request(1, request, id: 2, completions: 1)
            #expect(errorCode(reply) == "forbidden", "\(request)")
        }
        // An admin is told what is wrong.
        _ = try await member(h, 3, "root", admin: true)
        let unknown = try await h.request(3, requests[0], id: 2, completions: 1)
        #expect(errorCode(unknown) == "bad_request")
        let days = try await h.request(3, requests[4], id: 2, completions: 1)
        #expect(errorCode(days) == "bad_request")
        #expect(h.store.state.withLock { ($0.settings.count, $0.audit.count) } == (0, 0))
    }

    @Test func aValueEqualToTheOneInForceIsNeitherStoredNorAudited() async throws {
        let h = HubHarness()
        _ = try await member(h, 1, "root", admin: true)
        let same = try await h.request(
            1, #"{"id":2,"op":"admin.settings.set","settings":{"chat_text_limit":4000}}"#, id: 2, completions: 1)
        #expect(settings(same)["chat_text_limit"] as? Int == 4_000)
        #expect(h.store.state.withLock { ($0.settings.count, $0.audit.count) } == (0, 0))
    }

    @Test func aChangeIsAuditedCommittedAndInForceAtOnce() async throws {
        let h = HubHarness()
        let root = try await member(h, 1, "root", admin: true)
        _ = try await member(h, 2, "bob")
        let bob = try await member(h, 3, "carol")
        let get = try await h.request(1, #"{"id":2,"op":"admin.settings.get"}"#, id: 2, completions: 1)
        #expect(settings(get)["chat_text_limit"] as? Int == 4_000)
        let definition = try #require(
            (get["definitions"] as? [[String: Any]])?.first { $0["key"] as? String == "chat_text_limit" })
        #expect(definition["type"] as? String == "integer" && definition["min"] as? Int == 1)
        #expect(definition["default"] as? Int == 4_000)

        let set = try await h.request(
            1, #"{"id":3,"op":"admin.settings.set","settings":{"chat_text_limit":10}}"#, id: 3, completions: 1)
        #expect(settings(set)["chat_text_limit"] as? Int == 10)
        let stored = h.store.state.withLock { $0.settings }
        #expect(stored == ["chat_text_limit": "10"])
        let line = try #require(h.store.state.withLock { $0.audit.last })
        #expect(line.admin.id == root && line.action == "setting.set" && line.targetName == "chat_text_limit")
        #expect(line.detail == "4000 → 10")
        // The chat feature checks the new limit on the very next message.
        let long = try await h.request(
            2, #"{"id":4,"op":"chat.send","to":\#(bob),"text":"eleven byte"}"#, id: 4)
        #expect(errorCode(long) == "bad_request")
        #expect(
            (long["error"] as? [String: Any])?["message"] as? String == "field 'text' must be at most 10 bytes (UTF-8)")
        let short = try await h.request(2, #"{"id":5,"op":"chat.send","to":\#(bob),"text":"hi"}"#, id: 5)
        #expect(errorCode(short) == "not_friends")

        // null: back to the configured default, and the stored override is gone.
        let reset = try await h.request(
            1, #"{"id":6,"op":"admin.settings.set","settings":{"chat_text_limit":null}}"#, id: 6, completions: 1)
        #expect(settings(reset)["chat_text_limit"] as? Int == 4_000)
        let (cleared, resetLine) = h.store.state.withLock { ($0.settings.isEmpty, $0.audit.last?.detail) }
        #expect(cleared && resetLine == "10 → 4000 (default)")
    }

    @Test func oneBadValueRefusesTheWholeChangeNamingItsKey() async throws {
        let h = HubHarness()
        _ = try await member(h, 1, "root", admin: true)
        // A setting registered after start, the way a feature that lands later registers its own.
        var photoFlag = true
        h.hub.settings.registerBoolean("photo_flag", default: true, help: "A flag for the test.") {
            photoFlag = $0
        }
        let cases: [(String, String)] = [
            (#"{"photo_flag":false,"chat_text_limit":0}"#, "setting 'chat_text_limit' must be 1–65536"),
            (#"{"photo_flag":false,"chat_text_limit":"x"}"#, "field 'chat_text_limit' must be an integer"),
            (#"{"chat_text_limit":12,"photo_flag":1}"#, "field 'photo_flag' must be a boolean"),
            (
                #"{"chat_text_limit":12,"nope":1}"#,
                "unknown setting 'nope' (known: chat_text_limit, report_threshold, max_nearby_radius, guests_may_post, "
                    + "posts_per_hour, photo_flag)"
            ),
            (#"{}"#, "field 'settings' must name at least one setting"),
        ]
        for (n, (body, message)) in cases.enumerated() {
            let reply = try await h.request(
                1, #"{"id":\#(n + 10),"op":"admin.settings.set","settings":\#(body)}"#, id: n + 10, completions: 1)
            #expect(errorCode(reply) == "bad_request", "\(body)")
            #expect((reply["error"] as? [String: Any])?["message"] as? String == message)
        }
        #expect(photoFlag && h.hub.settings.value("chat_text_limit") == .integer(4_000))
        let untouched = h.store.state.withLock { ($0.settings.count, $0.audit.count) }
        #expect(untouched == (0, 0))

        // A store that fails writes: refused, and nothing is put in force.
        h.store.state.withLock { $0.failWrites = true }
        let failed = try await h.request(
            1, #"{"id":20,"op":"admin.settings.set","settings":{"photo_flag":false}}"#, id: 20, completions: 1)
        #expect(errorCode(failed) == "internal")
        #expect(photoFlag)
        h.store.state.withLock { $0.failWrites = false }
        let ok = try await h.request(
            1, #"{"id":21,"op":"admin.settings.set","settings":{"photo_flag":false}}"#, id: 21, completions: 1)
        #expect(settings(ok)["photo_flag"] as? Bool == false)
        #expect(!photoFlag)
        let last = h.store.state.withLock { $0.audit.last?.detail }
        #expect(last == "true → false")
    }
}
