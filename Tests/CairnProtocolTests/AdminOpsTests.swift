import CairnAdmin
import CairnCore
import CairnHub
// The admin ops in the hub: forbidden without the role (asked of the store at each request), browsing users by
// username or email prefix with keyset pages, suspending (the target's connections close with 4503, its login and
// token answer `suspended`, every action is in the audit log) and unsuspending; an admin cannot suspend themselves
// or another admin. Registration takes an email and login accepts it.
import CairnHubTestSupport
import CairnLoop
import CairnProtocol
import CairnWire
import Synchronization
import Testing

@testable import CairnSessions

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct AdminOpsTests {
    /// Registers `name` (with an email) on `connection` and returns its id.
    func member(_ h: HubHarness, _ connection: ConnectionID, _ name: String, admin: Bool = false) async throws -> Int64
    {
        h.router.connectionOpened(connection, token: nil)
        let reply = try await h.request(
            connection,
            #"{"id":1,"op":"register","username":"\#(name)","password":"password1","email":"\#(name)@Example.org"}"#,
            id: 1, completions: 1)
        let id = Int64(try #require((reply["user"] as? [String: Any])?["id"] as? Int))
        if admin { h.store.state.withLock { _ = $0.admins.insert(id) } }
        return id
    }

    @Test func everyAdminOpIsForbiddenWithoutTheRole() async throws {
        let h = HubHarness()
        let alice = try await member(h, 1, "alice")
        let bob = try await member(h, 2, "bob")
        for op in [
            #""op":"admin.users""#, #""op":"admin.user.suspend","user":\#(bob),"reason":"x""#,
            #""op":"admin.user.unsuspend","user":\#(bob)"#, #""op":"admin.audit""#,
        ] {
            let reply = try await h.request(1, #"{"id":5,\#(op)}"#, id: 5, completions: 1)
            #expect(errorCode(reply) == "forbidden", "\(op)")
        }
        // Granted in the store: the next request sees it, no restart.
        h.store.state.withLock { _ = $0.admins.insert(alice) }
        let reply = try await h.request(1, #"{"id":6,"op":"admin.users"}"#, id: 6, completions: 1)
        #expect(reply["ok"] as? Bool == true)
    }

    @Test func usersAreSearchedByUsernameOrEmailPrefixAndPaged() async throws {
        let h = HubHarness()
        _ = try await member(h, 1, "root", admin: true)
        for (i, name) in ["anna", "andy", "bob", "amir", "zed"].enumerated() {
            _ = try await member(h, ConnectionID(10 + i), name)
        }
        h.router.connectionOpened(20, token: nil)
        try await h.send(20, #"{"id":1,"op":"guest"}"#, completions: 1)
        let first = try await h.request(1, #"{"id":2,"op":"admin.users","q":"A","limit":2}"#, id: 2, completions: 1)
        let names = (first["users"] as? [[String: Any]] ?? []).compactMap { $0["username"] as? String }
        #expect(names == ["amir", "andy"])
        let cursor = try #require(first["cursor"] as? String)
        let second = try await h.request(
            1, #"{"id":3,"op":"admin.users","q":"a","limit":2,"cursor":"\#(cursor)"}"#, id: 3, completions: 1)
        let rest = (second["users"] as? [[String: Any]] ?? []).compactMap { $0["username"] as? String }
        #expect(rest == ["anna"])
        #expect(second["cursor"] == nil)
        // By email prefix; the row carries the stored (lower-cased) email and the figures.
        let byEmail = try await h.request(1, #"{"id":4,"op":"admin.users","q":"bob@ex"}"#, id: 4, completions: 1)
        let bob = try #require((byEmail["users"] as? [[String: Any]])?.first)
        #expect(bob["email"] as? String == "bob@example.org")
        #expect(bob["friends"] as? Int == 0)
        #expect(bob["admin"] as? Bool == false)
        // Guests only when asked for.
        let all = try await h.request(1, #"{"id":5,"op":"admin.users"}"#, id: 5, completions: 1)
        #expect((all["users"] as? [[String: Any]])?.count == 6)
        let withGuests = try await h.request(1, #"{"id":6,"op":"admin.users","guests":true}"#, id: 6, completions: 1)
        #expect((withGuests["users"] as? [[String: Any]])?.count == 7)
        let bad = try await h.request(1, #"{"id":7,"op":"admin.users","limit":0}"#, id: 7, completions: 1)
        #expect(errorCode(bad) == "bad_request")
    }

    @Test func suspendingClosesTheConnectionsAndRefusesLoginAndAuthUntilLifted() async throws {
        let h = HubHarness()
        let root = try await member(h, 1, "root", admin: true)
        h.router.connectionOpened(2, token: nil)
        let token = try await h.registerAndToken(2, "mallory")
        h.router.connectionOpened(3, token: nil)
        try await h.send(3, #"{"id":1,"op":"auth","token":"\#(token)"}"#, completions: 1)
        _ = h.outbound.take(3)
        let mallory = try #require(h.hub.sessions.user(of: 2)).id
        let reply = try await h.request(
            1, #"{"id":2,"op":"admin.user.suspend","user":\#(mallory),"reason":"spam","for":3600}"#, id: 2,
            completions: 1)
        #expect(reply["ok"] as? Bool == true)
        let suspended = try #require((reply["user"] as? [String: Any])?["suspended"] as? [String: Any])
        #expect(suspended["reason"] as? String == "spam")
        #expect(suspended["until"] as? Int == Int(h.clock.now() + 3_600_000))
        #expect(h.outbound.closes[2]?.code == .suspended)
        #expect(h.outbound.closes[3]?.code == .suspended)
        #expect(h.hub.sessions.connections(of: mallory).isEmpty)
        // Login (right password) and auth answer `suspended`.
        h.router.connectionOpened(4, token: nil)
        let login = try await h.request(
            4, #"{"id":1,"op":"login","username":"mallory","password":"password1"}"#, id: 1, completions: 1)
        #expect(errorCode(login) == "suspended")
        let auth = try await h.request(4, #"{"id":2,"op":"auth","token":"\#(token)"}"#, id: 2, completions: 1)
        #expect(errorCode(auth) == "suspended")
        // A token on the upgrade is closed with 4503 too.
        h.router.connectionOpened(5, token: token)
        try await h.scheduler.run()
        #expect(h.outbound.closes[5]?.code == .suspended)
        // Lifted: login works again, and both actions are audited.
        let lifted = try await h.request(
            1, #"{"id":3,"op":"admin.user.unsuspend","user":\#(mallory)}"#, id: 3, completions: 1)
        #expect(lifted["lifted"] as? Bool == true)
        let again = try await h.request(
            4, #"{"id":3,"op":"login","username":"mallory","password":"password1"}"#, id: 3,
            completions: 1)
        #expect(again["ok"] as? Bool == true)
        let audit = h.store.state.withLock { $0.audit }
        #expect(audit.map(\.action) == ["user.suspend", "user.unsuspend"])
        #expect(audit.allSatisfy { $0.admin.id == root && $0.targetID == mallory && $0.targetName == "mallory" })
        #expect(audit.first?.reason == "spam")
        let log = try await h.request(1, #"{"id":4,"op":"admin.audit"}"#, id: 4, completions: 1)
        #expect(
            (log["entries"] as? [[String: Any]])?.compactMap { $0["action"] as? String }
                == ["user.unsuspend", "user.suspend"])
    }

    @Test func anAccountCheckInFlightWhenTheSuspensionLandsDoesNotStartASession() async throws {
        let h = HubHarness()
        _ = try await member(h, 1, "mallory")
        let mallory = try #require(h.hub.sessions.user(of: 1))
        h.router.connectionOpened(2, token: nil)
        // A login of mallory's began (at revocation epoch 0) and read no suspension; the suspension commits now.
        h.hub.sessions.suspended(mallory.id)
        #expect(h.outbound.closes[1]?.code == .suspended)
        h.hub.sessions.bind(2, to: mallory, token: "late", checkedFrom: 0)
        #expect(h.hub.sessions.user(of: 2) == nil)
        #expect(h.outbound.closes[2]?.code == .suspended)
        // A check that began after it (and so met no suspension: it was lifted) binds.
        h.router.connectionOpened(3, token: nil)
        h.hub.sessions.bind(3, to: mallory, token: "later", checkedFrom: 1)
        #expect(h.hub.sessions.user(of: 3) == mallory)
    }

    @Test func aSuspensionForATimeRunsOut() async throws {
        let h = HubHarness()
        _ = try await member(h, 1, "root", admin: true)
        let eve = try await member(h, 2, "eve")
        _ = try await h.request(
            1, #"{"id":2,"op":"admin.user.suspend","user":\#(eve),"reason":"cool off","for":60}"#, id: 2,
            completions: 1)
        h.router.connectionOpened(4, token: nil)
        let refused = try await h.request(
            4, #"{"id":1,"op":"login","username":"eve","password":"password1"}"#, id: 1, completions: 1)
        #expect(errorCode(refused) == "suspended")
        h.clock.advance(by: 60_000)
        let allowed = try await h.request(
            4, #"{"id":2,"op":"login","username":"eve","password":"password1"}"#, id: 2, completions: 1)
        #expect(allowed["ok"] as? Bool == true)
    }

    @Test func adminsCannotSuspendThemselvesOrEachOtherAndBadInputChangesNothing() async throws {
        let h = HubHarness()
        let root = try await member(h, 1, "root", admin: true)
        let other = try await member(h, 2, "other", admin: true)
        let bob = try await member(h, 3, "bob")
        // (fields, code, jobs: every refusal confirms the role first, so it is told to admins only).
        let cases: [(String, String, Int)] = [
            (#""user":\#(root),"reason":"x""#, "forbidden", 1),
            (#""user":\#(other),"reason":"x""#, "forbidden", 1),
            (#""user":999,"reason":"x""#, "not_found", 1),
            (#""user":\#(bob),"reason":"  ""#, "bad_request", 1),
            (#""user":\#(bob),"reason":"x","for":0"#, "bad_request", 1),
            (#""user":\#(bob)"#, "bad_request", 1),
        ]
        for (i, (fields, code, jobs)) in cases.enumerated() {
            let reply = try await h.request(
                1, #"{"id":\#(10 + i),"op":"admin.user.suspend",\#(fields)}"#, id: 10 + i, completions: jobs)
            #expect(errorCode(reply) == code, "\(fields)")
        }
        let untouched = h.store.state.withLock { [$0.suspensions.count, $0.audit.count] } == [0, 0]
        #expect(untouched)
        let rootLogs = try await h.request(1, #"{"id":31,"op":"admin.audit"}"#, id: 31, completions: 1)
        #expect((rootLogs["entries"] as? [Any])?.isEmpty == true)
        #expect(h.outbound.closes.isEmpty)
        let none = try await h.request(
            1, #"{"id":30,"op":"admin.user.unsuspend","user":\#(bob)}"#, id: 30, completions: 1)
        #expect(none["lifted"] as? Bool == false)
        let noAudit = h.store.state.withLock { $0.audit.isEmpty }
        #expect(noAudit)
    }

    @Test func registrationRefusesATakenEmailAndLoginTakesTheEmailField() async throws {
        let h = HubHarness()
        _ = try await member(h, 1, "alice")
        h.router.connectionOpened(2, token: nil)
        let taken = try await h.request(
            2, #"{"id":1,"op":"register","username":"alice2","password":"password1","email":"ALICE@example.org"}"#,
            id: 1, completions: 1)
        #expect(errorCode(taken) == "username_taken")
        let bad = try await h.request(
            2, #"{"id":2,"op":"register","username":"alice3","password":"password1","email":"nope"}"#, id: 2,
            completions: 1)
        #expect(errorCode(bad) == "bad_request")
        let login = try await h.request(
            2, #"{"id":3,"op":"login","email":"alice@example.org","password":"password1"}"#, id: 3, completions: 1)
        #expect(login["ok"] as? Bool == true)
    }
}
