import CairnCore
import CairnHub
import CairnHubTestSupport
import CairnLoop
import CairnProtocol
import CairnSocial
import Synchronization
import Testing

@testable import CairnLiveMap

// Abuse and floods through the router (issue 11, items 1–4): stale fixes bounded per user and the history purged by
// age; relic passwords backed off per relic across users, password checks budgeted per connection, new accounts
// limited per source address; spoofed positions kept away from relics; relic.appear bounded per move and live relics
// capped per area, guests far lower than members. 0.001° of latitude is about 111 m.

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct FloodTests {
    func relicID(_ reply: [String: Any]) throws -> Int {
        try #require((reply["relic"] as? [String: Any])?["id"] as? Int, "no relic in \(reply)")
    }

    func appeared(_ h: HubHarness, _ connection: ConnectionID) -> [Int] {
        h.outbound.take(connection).filter { $0["ev"] as? String == "relic.appear" }
            .compactMap { ($0["relic"] as? [String: Any])?["id"] as? Int }
    }

    /// Runs what the hub started off the loop until nothing is in flight.
    func settle(_ h: HubHarness) async throws {
        while h.hub.operationsInFlight > 0 { try await h.scheduler.run() }
    }

    // MARK: 1. Stale fixes

    @Test func staleFixesAreBoundedPerUserBetweenSnapshots() async throws {
        let h = HubHarness {
            $0.lateFixesPerUser = 8
            $0.messagesPerSecond = 0  // the per-connection message rate is not what is tested here
        }
        let alice = try await h.user(1, "alice")
        let now = h.clock.now()
        h.move(1, lat: 10, lon: 10, ts: now)
        var frame = ""
        for i in 1...1_000 { frame += #"{"op":"pos","lat":20,"lon":20,"ts":\#(now - Int64(i))}"# + "\n" }
        h.router.receive(1, frame)
        #expect(h.hub.liveMap.pendingRows == 1 + 8)
        h.hub.flushPositionsNow()
        try await h.settle()
        let history = h.store.state.withLock { $0.history }
        #expect(history.count == 8)
        #expect(history.map(\.fix.ts).sorted() == (993...1_000).map { now - Int64($0) }.sorted(), "the newest arrivals")
        #expect(history.allSatisfy { $0.userID == alice })
        #expect(h.hub.liveMap.fixes[alice]?.lat == 10)
    }

    @Test func historyOlderThanTheRetentionIsNotKeptAndIsPurgedPeriodically() async throws {
        let h = HubHarness {
            $0.positionHistoryRetentionMs = 3_600_000
            $0.positionHistoryPurgeIntervalMs = 60_000
        }
        _ = try await h.user(1, "alice")
        let now = h.clock.now()
        h.move(1, lat: 10, lon: 10, ts: now)
        let old = try await h.request(1, #"{"id":2,"op":"pos","lat":1,"lon":1,"ts":\#(now - 3_600_001)}"#, id: 2)
        #expect(old["stale"] as? Bool == true)
        #expect(h.hub.liveMap.pendingRows == 1, "older than the retention: not kept")
        h.hub.tick()
        try await settle(h)
        h.clock.advance(by: 30_000)
        h.hub.tick()  // too soon for another purge
        try await settle(h)
        h.clock.advance(by: 30_000)
        h.hub.tick()
        try await settle(h)
        let cutoffs = h.store.state.withLock { $0.purgeCutoffs }
        #expect(cutoffs == [now - 3_600_000, now + 60_000 - 3_600_000])
    }

    // MARK: 2. Password guessing

    /// Alice leaves a locked relic at 48.85, 2.35; returns its id.
    func lockedRelic(_ h: HubHarness) async throws -> Int {
        _ = try await h.user(1, "alice")
        h.stand(1, lat: 48.85, lon: 2.35)
        _ = h.outbound.take(1)
        let create = #"{"id":3,"op":"relic.create","text":"vault","radius":50,"password":"sesame"}"#
        let reply = try await h.request(1, create, id: 3, completions: 1)
        return try relicID(reply)
    }

    @Test func guessesAcrossManyAccountsBackOffPerRelicButNeverLockOutTheCreator() async throws {
        let h = HubHarness { $0.relicFailuresBeforeBackoff = 3 }
        let id = try await lockedRelic(h)
        var codes: [String?] = []
        for n in 0..<5 {
            let connection = ConnectionID(10 + n)
            _ = try await h.user(connection, "guesser\(n)")  // a fresh account each time
            h.stand(connection, lat: 48.8501, lon: 2.35)
            let reply = try await h.request(
                connection, #"{"id":7,"op":"relic.open","relic":\#(id),"password":"nope"}"#,
                id: 7, completions: n < 3 ? 1 : 0)
            codes.append(errorCode(reply))
        }
        #expect(codes == ["wrong_password", "wrong_password", "wrong_password", "rate_limited", "rate_limited"])
        let own = try await h.request(1, #"{"id":8,"op":"relic.open","relic":\#(id)}"#, id: 8, completions: 1)
        #expect((own["relic"] as? [String: Any])?["text"] as? String == "vault", "the creator needs no password")
        h.clock.advance(by: 1_000)  // the first back-off is over; the right password opens and clears the count
        let right = try await h.request(
            14, #"{"id":9,"op":"relic.open","relic":\#(id),"password":"sesame"}"#, id: 9,
            completions: 1)
        #expect((right["relic"] as? [String: Any])?["text"] as? String == "vault")
    }

    @Test func passwordChecksSpendAPerConnectionBudget() async throws {
        let h = HubHarness {
            $0.passwordChecksPerMinute = 6
            $0.passwordChecksBurst = 3
        }
        let id = try await lockedRelic(h)
        _ = try await h.user(2, "bob")  // the registration is the first check
        h.stand(2, lat: 48.8501, lon: 2.35)
        var codes: [String?] = []
        for _ in 0..<3 {
            h.router.receive(2, #"{"id":7,"op":"relic.open","relic":\#(id),"password":"nope"}"#)
            if h.hub.operationsInFlight > 0 { try await h.scheduler.run() }
            codes.append(h.outbound.take(2).first { $0["id"] as? Int == 7 }.flatMap(errorCode))
        }
        #expect(codes == ["wrong_password", "wrong_password", "rate_limited"])
        h.clock.advance(by: 10_000)  // six a minute: one more after ten seconds
        let again = try await h.request(
            2, #"{"id":7,"op":"relic.open","relic":\#(id),"password":"sesame"}"#, id: 7,
            completions: 1)
        #expect((again["relic"] as? [String: Any])?["text"] as? String == "vault")
    }

    @Test func newAccountsAreLimitedPerSourceAddress() async throws {
        let h = HubHarness { $0.signupsPerAddress = 2 }
        var codes: [String?] = []
        for n in 0..<3 {
            h.router.connectionOpened(ConnectionID(1 + n), token: nil, peer: "203.0.113.7")
            let reply = try await h.request(ConnectionID(1 + n), #"{"id":1,"op":"guest"}"#, completions: n < 2 ? 1 : 0)
            codes.append(errorCode(reply))
        }
        #expect(codes == [nil, nil, "rate_limited"])
        h.router.connectionOpened(4, token: nil, peer: "203.0.113.7")
        let register = try await h.request(4, #"{"id":1,"op":"register","username":"mallory","password":"password1"}"#)
        #expect(errorCode(register) == "rate_limited")
        h.router.connectionOpened(5, token: nil, peer: "198.51.100.1")
        let elsewhere = try await h.request(
            5, #"{"id":1,"op":"register","username":"taken","password":"password1"}"#,
            completions: 1)
        #expect(elsewhere["ok"] as? Bool == true, "another address is not affected")
        for connection: ConnectionID in 6...7 {  // refused registrations made no account and do not count
            h.router.connectionOpened(connection, token: nil, peer: "198.51.100.1")
            let taken = try await h.request(
                connection,
                #"{"id":1,"op":"register","username":"taken","password":"password1"}"#,
                completions: 1)
            #expect(errorCode(taken) == "username_taken")
        }
        h.router.connectionOpened(8, token: nil, peer: "198.51.100.1")
        #expect(try await h.request(8, #"{"id":1,"op":"guest"}"#, completions: 1)["ok"] as? Bool == true)
        h.router.connectionOpened(9, token: nil, peer: "198.51.100.1")
        #expect(errorCode(try await h.request(9, #"{"id":1,"op":"guest"}"#)) == "rate_limited")
        h.clock.advance(by: 3_600_001)
        h.router.connectionOpened(10, token: nil, peer: "203.0.113.7")
        #expect(try await h.request(10, #"{"id":1,"op":"guest"}"#, completions: 1)["ok"] as? Bool == true)
    }

    // MARK: 3. Spoofed positions

    @Test func aSessionsFirstFixOpensNothingUntilASecondConfirmsIt() async throws {
        let h = HubHarness()
        let id = try await lockedRelic(h)
        _ = try await h.user(2, "bob")
        h.move(2, lat: 48.8501, lon: 2.35)
        let first = try await h.request(2, #"{"id":7,"op":"relic.open","relic":\#(id),"password":"sesame"}"#, id: 7)
        #expect(errorCode(first) == "bad_request")
        #expect(((first["error"] as? [String: Any])?["message"] as? String)?.contains("not confirmed") == true)
        let nearby = try await h.request(2, #"{"id":8,"op":"relic.nearby"}"#, id: 8)
        #expect(errorCode(nearby) == "bad_request")
        h.move(2, lat: 48.85011, lon: 2.35)
        let second = try await h.request(
            2, #"{"id":9,"op":"relic.open","relic":\#(id),"password":"sesame"}"#, id: 9,
            completions: 1)
        #expect((second["relic"] as? [String: Any])?["text"] as? String == "vault")
        // A new session starts over: the first fix after coming back online is not trusted on its own.
        h.router.connectionClosed(2)
        h.router.connectionOpened(3, token: nil)
        try await h.send(3, #"{"id":1,"op":"login","username":"bob","password":"password1"}"#, completions: 1)
        _ = h.outbound.take(3)
        h.move(3, lat: 48.8501, lon: 2.35)
        let again = try await h.request(3, #"{"id":10,"op":"relic.open","relic":\#(id),"password":"sesame"}"#, id: 10)
        #expect(errorCode(again) == "bad_request")
    }

    @Test func aTeleportIsFlaggedForFriendsButOpensNothingEvenWhenRepeated() async throws {
        let h = HubHarness()
        let id = try await lockedRelic(h)
        let alice: Int64 = 1
        let bob = try await h.user(2, "bob")
        try await h.befriend(1, alice, 2, bob)
        _ = try await h.request(1, #"{"id":5,"op":"friends.watch"}"#, id: 5)
        h.stand(2, lat: 40.0, lon: -74.0)  // New York, confirmed
        _ = h.outbound.takeLatest(1)
        h.clock.advance(by: 1_000)
        let jump = try await h.request(2, #"{"id":6,"op":"pos","lat":48.8501,"lon":2.35}"#, id: 6)
        #expect(jump["flagged"] as? Bool == true)
        #expect(h.outbound.takeLatest(1)[bob]?["flagged"] as? Bool == true, "friends still see it, flagged")
        for _ in 0..<3 {  // more fixes at the spoofed place: each is plausible after the last, not after the anchor
            h.clock.advance(by: 1_000)
            h.move(2, lat: 48.8501, lon: 2.35)
        }
        let open = try await h.request(2, #"{"id":7,"op":"relic.open","relic":\#(id),"password":"sesame"}"#, id: 7)
        #expect(errorCode(open) == "too_far")
        #expect(appeared(h, 2).isEmpty, "roaming did not follow the spoofed position")
        let nearby = try await h.request(2, #"{"id":8,"op":"relic.nearby"}"#, id: 8)
        #expect((nearby["relics"] as? [[String: Any]])?.isEmpty == true)
        // Real travel time (about 5,840 km at 300 m/s: under 5.5 hours) makes the far place plausible again.
        h.clock.advance(by: 6 * 3_600_000)
        h.move(2, lat: 48.8501, lon: 2.35)
        #expect(appeared(h, 2) == [id])
    }

    // MARK: 4. Relic floods

    @Test func oneMoveAnnouncesOnlyTheNearestRelics() async throws {
        let h = HubHarness {
            $0.relicAppearPerMove = 2
            $0.relicPlacementSlack = 500
        }
        _ = try await h.user(1, "alice")
        h.stand(1, lat: 48.85, lon: 2.35)
        var ids: [Int] = []
        for (i, lat) in [48.853, 48.851, 48.854, 48.852].enumerated() {  // all 1 km circles around bob's target
            let create = #"{"id":\#(i + 3),"op":"relic.create","text":"r","radius":1000,"lat":\#(lat),"lon":2.35}"#
            let reply = try await h.request(1, create, id: i + 3, completions: 1)
            ids.append(try relicID(reply))
        }
        _ = try await h.user(2, "bob")
        h.stand(2, lat: 48.80, lon: 2.35)  // ~5.5 km south, outside every circle
        #expect(appeared(h, 2).isEmpty)
        h.clock.advance(by: 60_000)
        h.move(2, lat: 48.85, lon: 2.35)
        #expect(appeared(h, 2) == [ids[1], ids[3]], "the two nearest")
        let nearby = try await h.request(2, #"{"id":9,"op":"relic.nearby"}"#, id: 9)
        #expect((nearby["relics"] as? [[String: Any]])?.count == 4, "nearby lists the rest")
        h.clock.advance(by: 60_000)
        h.move(2, lat: 48.80, lon: 2.35)
        let vanished = h.outbound.take(2).filter { $0["ev"] as? String == "relic.vanish" }
            .compactMap { $0["id"] as? Int }
        #expect(vanished.sorted() == [ids[1], ids[3]].sorted(), "only what was announced vanishes")
    }

    @Test func liveRelicsAreCappedPerAreaAndGuestsGetFarFewer() async throws {
        let h = HubHarness {
            $0.relicsPerArea = 3
            $0.relicsPerAreaGuest = 1
            $0.relicsPerGuest = 2
        }
        _ = try await h.user(1, "alice")
        h.stand(1, lat: 48.85, lon: 2.35)
        var codes: [String?] = []
        for i in 0..<4 {
            let create = #"{"id":\#(i + 3),"op":"relic.create","text":"r","radius":50}"#
            let reply = try await h.request(1, create, id: i + 3, completions: i < 3 ? 1 : 0)
            codes.append(errorCode(reply))
        }
        #expect(codes == [nil, nil, nil, "rate_limited"])
        h.clock.advance(by: 60_000)
        h.move(1, lat: 48.87, lon: 2.35)  // ~2.2 km away: another area
        let elsewhere = try await h.request(
            1, #"{"id":9,"op":"relic.create","text":"r","radius":50}"#, id: 9,
            completions: 1)
        #expect(elsewhere["ok"] as? Bool == true)

        h.router.connectionOpened(2, token: nil)
        _ = try await h.request(2, #"{"id":1,"op":"guest"}"#, completions: 1)
        h.stand(2, lat: 10, lon: 10)
        let guestCreate = #""op":"relic.create","text":"g","radius":50}"#
        let first = try await h.request(2, #"{"id":2,"# + guestCreate, id: 2, completions: 1)
        #expect(first["ok"] as? Bool == true)
        let sameArea = try await h.request(2, #"{"id":3,"# + guestCreate, id: 3)
        #expect(errorCode(sameArea) == "rate_limited")
        h.clock.advance(by: 60_000)
        h.move(2, lat: 10.02, lon: 10)
        let second = try await h.request(2, #"{"id":4,"# + guestCreate, id: 4, completions: 1)
        #expect(second["ok"] as? Bool == true)
        h.clock.advance(by: 60_000)
        h.move(2, lat: 10.04, lon: 10)
        let third = try await h.request(2, #"{"id":5,"# + guestCreate, id: 5)
        #expect(errorCode(third) == "rate_limited", "a guest's total is lower too")
    }
}
