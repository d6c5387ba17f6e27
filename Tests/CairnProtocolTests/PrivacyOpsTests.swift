import CairnCore
import CairnGeo
import CairnHub
import CairnHubTestSupport
import CairnLoop
import CairnProtocol
import Synchronization
import Testing

@testable import CairnSocial

// Privacy on the server: pause, resume, per-friend levels, approximate cells, timed reverts, persistence.

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct HubPrivacyTests {
    func watchedPair() async throws -> (HubHarness, Int64, Int64) {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        try await h.befriend(1, alice, 2, bob)
        _ = try await h.request(2, #"{"id":5,"op":"friends.watch"}"#, id: 5)
        return (h, alice, bob)
    }

    @Test func shareListSaysWhatTheCallerSharesNow() async throws {
        let (h, _, bob) = try await watchedPair()
        let none = try await h.request(1, #"{"id":2,"op":"share.list"}"#, id: 2)
        #expect(none["paused"] as? Bool == false && none["until"] == nil)
        #expect((none["levels"] as? [Any])?.isEmpty == true)
        _ = try await h.request(
            1, #"{"id":3,"op":"share.set","user":\#(bob),"level":"approximate","for":3600}"#, id: 3, completions: 1)
        _ = try await h.request(1, #"{"id":4,"op":"share.pause","for":60}"#, id: 4, completions: 1)
        let set = try await h.request(1, #"{"id":5,"op":"share.list"}"#, id: 5)
        #expect(set["paused"] as? Bool == true)
        #expect(set["until"] as? Int64 == h.clock.now() + 60_000)
        let levels = try #require(set["levels"] as? [[String: Any]])
        #expect(levels.count == 1 && levels.first?["user"] as? Int64 == bob)
        #expect(levels.first?["level"] as? String == "approximate")
        #expect(levels.first?["until"] as? Int64 == h.clock.now() + 3_600_000)
        // A timed precise rule changes nothing anyone sees: not listed.
        _ = try await h.request(
            1, #"{"id":8,"op":"share.set","user":\#(bob),"level":"precise","for":60}"#, id: 8, completions: 1)
        #expect((try await h.request(1, #"{"id":9,"op":"share.list"}"#, id: 9)["levels"] as? [Any])?.isEmpty == true)
        _ = try await h.request(
            1, #"{"id":10,"op":"share.set","user":\#(bob),"level":"approximate","for":3600}"#, id: 10, completions: 1)
        // Timed rules that ran out are not listed; bob's own list is his, not alice's.
        h.clock.advance(by: 3_600_000)
        let later = try await h.request(1, #"{"id":6,"op":"share.list"}"#, id: 6)
        #expect(later["paused"] as? Bool == false && (later["levels"] as? [Any])?.isEmpty == true)
        let bobs = try await h.request(2, #"{"id":7,"op":"share.list"}"#, id: 7)
        #expect((bobs["levels"] as? [Any])?.isEmpty == true)
    }

    @Test func pauseHidesAndResumeShowsAgain() async throws {
        let (h, alice, _) = try await watchedPair()
        h.move(1, lat: 10, lon: 10)
        _ = h.outbound.takeLatest(2)
        try await h.send(1, #"{"id":2,"op":"share.pause"}"#, completions: 1)
        let hidden = try #require(h.outbound.takeLatest(2)[alice])
        #expect(hidden["ev"] as? String == "pos.hidden")
        #expect(hidden["lat"] == nil)
        h.move(1, lat: 11, lon: 11)
        #expect(h.outbound.takeLatest(2).isEmpty)
        let watch = try await h.request(2, #"{"id":6,"op":"friends.watch"}"#, id: 6)
        #expect((watch["positions"] as? [[String: Any]])?.isEmpty == true)
        try await h.send(1, #"{"id":3,"op":"share.resume"}"#, completions: 1)
        #expect(h.outbound.takeLatest(2)[alice]?["lat"] as? Double == 11)
    }

    @Test func pauseWithdrawsAPendingPositionBeforeItIsWritten() async throws {
        let (h, alice, _) = try await watchedPair()
        h.move(1, lat: 10, lon: 10)
        try await h.send(1, #"{"id":2,"op":"share.pause"}"#)  // not committed yet
        #expect(h.outbound.latest[2]?[alice].map { String(decoding: $0, as: UTF8.self) }?.contains("\"lat\"") == false)
        try await h.scheduler.run()
    }

    @Test func timedPauseRevertsByItself() async throws {
        let (h, alice, bob) = try await watchedPair()
        h.move(1, lat: 10, lon: 10)
        try await h.send(1, #"{"id":2,"op":"share.pause","for":60}"#, completions: 1)
        _ = h.outbound.takeLatest(2)
        h.clock.advance(by: 59_000)
        h.hub.tick()
        #expect(h.outbound.takeLatest(2).isEmpty)
        h.clock.advance(by: 1_000)
        // Read-time expiry.
        #expect(h.hub.social.rules.level(owner: alice, viewer: bob, now: h.clock.now()) == .precise)
        let stored = h.store.state.withLock { ($0.rules, $0.ruleVersions) }
        h.hub.tick()
        #expect(h.outbound.takeLatest(2)[alice]?["lat"] as? Double == 10)
        // Expiry writes nothing and takes no version (every node expires the rule by its end time; a version taken
        // here could outrank a newer rule committed elsewhere): the stored rule is as it was, ignored on the next
        // start because its time is up.
        try await h.settle()  // whatever the tick started (a position flush, the purges) has run
        let after = h.store.state.withLock { ($0.rules.count, $0.ruleVersions) }
        #expect(after.0 == 1 && stored.0.count == 1)
        #expect(after.1 == stored.1)
        let restored = HubHarness()
        restored.clock.advance(by: h.clock.now() - restored.clock.now())
        restored.hub.restore(try h.store.loadSocial())
        #expect(!restored.hub.social.rules.isPaused(alice, now: restored.clock.now()))
    }

    @Test func approximateIsCoarseAndStable() async throws {
        let (h, alice, bob) = try await watchedPair()
        try await h.send(1, #"{"id":2,"op":"share.set","user":\#(bob),"level":"approximate"}"#, completions: 1)
        _ = h.outbound.takeLatest(2)
        h.move(1, lat: 48.85661, lon: 2.35222)
        let first = try #require(h.outbound.takeLatest(2)[alice])
        #expect(first["approx"] as? Bool == true)
        #expect(first["acc"] == nil)
        let lat = try #require(first["lat"] as? Double)
        let lon = try #require(first["lon"] as? Double)
        #expect(lat != 48.85661 && lon != 2.35222)
        let truth = try #require(GeoPointFactory.point(48.85661, 2.35222))
        #expect(try #require(GeoPointFactory.point(lat, lon)).distance(to: truth) < 1_600)
        // Small moves inside the cell tell the viewer nothing new.
        h.move(1, lat: 48.85671, lon: 2.35232)
        h.move(1, lat: 48.85651, lon: 2.35212)
        #expect(h.outbound.takeLatest(2).isEmpty)
        let watch = try await h.request(2, #"{"id":9,"op":"friends.watch"}"#, id: 9)
        let listed = try #require((watch["positions"] as? [[String: Any]])?.first)
        #expect(listed["lat"] as? Double == lat && listed["lon"] as? Double == lon)
    }

    @Test func hiddenForOneFriendOnly() async throws {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        let carol = try await h.user(3, "carol")
        try await h.befriend(1, alice, 2, bob)
        try await h.befriend(1, alice, 3, carol)
        _ = try await h.request(2, #"{"id":5,"op":"friends.watch"}"#, id: 5)
        _ = try await h.request(3, #"{"id":5,"op":"friends.watch"}"#, id: 5)
        try await h.send(1, #"{"id":2,"op":"share.set","user":\#(bob),"level":"hidden"}"#, completions: 1)
        _ = h.outbound.takeLatest(2)
        h.move(1, lat: 1, lon: 1)
        #expect(h.outbound.takeLatest(2).isEmpty)
        #expect(h.outbound.takeLatest(3)[alice]?["lat"] as? Double == 1)
    }

    @Test func shareSetNeedsAFriendAndAKnownLevel() async throws {
        let h = HubHarness()
        _ = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        #expect(
            errorCode(try await h.request(1, #"{"id":1,"op":"share.set","user":\#(bob),"level":"hidden"}"#))
                == "not_friends")
        #expect(
            errorCode(try await h.request(1, #"{"id":1,"op":"share.set","user":\#(bob),"level":"blurry"}"#))
                == "bad_request")
        #expect(errorCode(try await h.request(1, #"{"id":1,"op":"share.pause","for":0}"#)) == "bad_request")
    }

    @Test func aRevealFinishingAfterALaterHideDoesNotReveal() async throws {
        let (h, alice, bob) = try await watchedPair()
        h.router.connectionOpened(7, token: nil)
        try await h.send(7, #"{"id":1,"op":"login","username":"alice","password":"password1"}"#, completions: 1)
        _ = h.outbound.take(7)
        h.move(1, lat: 10, lon: 10)
        _ = h.outbound.takeLatest(2)
        // Connection 1 asks for precise (applied on commit); connection 7 then asks for hidden (applied at once).
        try await h.send(1, #"{"id":2,"op":"share.set","user":\#(bob),"level":"precise"}"#)
        try await h.send(7, #"{"id":3,"op":"share.set","user":\#(bob),"level":"hidden"}"#)
        try await h.scheduler.run(atLeast: 2)
        #expect(h.hub.social.rules.level(owner: alice, viewer: bob, now: h.clock.now()) == .hidden)
        h.move(1, lat: 11, lon: 11)
        #expect(h.outbound.takeLatest(2)[alice]?["lat"] == nil)
        #expect(h.store.state.withLock { $0.rules[[alice, bob]]?.0 } == .hidden)
    }

    @Test func undoingAFailedPauseLeavesOtherUsersRulesAlone() async throws {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        let carol = try await h.user(3, "carol")
        try await h.befriend(2, bob, 3, carol)
        h.store.state.withLock { $0.failRuleWritesOf = [alice] }
        try await h.send(1, #"{"id":2,"op":"share.pause"}"#)  // alice's write will fail
        try await h.send(2, #"{"id":3,"op":"share.set","user":\#(carol),"level":"hidden"}"#)
        try await h.scheduler.run(atLeast: 2)
        #expect(!h.hub.social.rules.isPaused(alice, now: h.clock.now()))
        #expect(h.hub.social.rules.level(owner: bob, viewer: carol, now: h.clock.now()) == .hidden)
    }

    @Test func anExpiryWhileARevealIsCommittingNeverShowsMoreThanAsked() async throws {
        let (h, alice, bob) = try await watchedPair()
        try await h.send(1, #"{"id":2,"op":"share.set","user":\#(bob),"level":"hidden","for":10}"#, completions: 1)
        h.move(1, lat: 10.123456, lon: 10.123456)
        _ = h.outbound.takeLatest(2)
        h.clock.advance(by: 9_900)
        // Not committed yet.
        try await h.send(1, #"{"id":3,"op":"share.set","user":\#(bob),"level":"approximate","for":3600}"#)
        h.clock.advance(by: 200)
        h.hub.tick()  // the 10 s rule would have ended now
        try await h.settle()  // the commit and whatever the tick started, in whichever order they answer
        #expect(h.hub.social.rules.level(owner: alice, viewer: bob, now: h.clock.now()) == .approximate)
        h.move(1, lat: 10.123457, lon: 10.123457)
        let seen = h.outbound.takeLatest(2)[alice]
        #expect(seen?["lat"] as? Double != 10.123457 && seen?["lat"] as? Double != 10.123456)
        #expect(h.store.state.withLock { $0.rules[[alice, bob]]?.0 } == .approximate)
    }

    @Test func twoFailedPausesLeaveNoPauseBehind() async throws {
        let (h, alice, _) = try await watchedPair()
        h.router.connectionOpened(7, token: nil)
        try await h.send(7, #"{"id":1,"op":"login","username":"alice","password":"password1"}"#, completions: 1)
        h.store.state.withLock { $0.failRuleWritesOf = [alice] }
        try await h.send(1, #"{"id":2,"op":"share.pause"}"#)
        try await h.send(7, #"{"id":3,"op":"share.pause","for":60}"#)
        try await h.scheduler.run(atLeast: 2)
        #expect(!h.hub.social.rules.isPaused(alice, now: h.clock.now()))  // as the store says
    }

    @Test func ruleVersionsContinueAboveWhatIsStored() async throws {
        let (h, alice, bob) = try await watchedPair()
        h.store.state.withLock { $0.ruleVersions[[alice, bob]] = Int64.max / 4 }  // a version from a "later" clock
        let restored = HubHarness()
        restored.hub.restore(try h.store.loadSocial())
        #expect(restored.hub.social.bumpRuleVersion(alice, bob) > Int64.max / 4)
    }

    @Test func settingsPersistAndAreRestored() async throws {
        let (h, alice, bob) = try await watchedPair()
        try await h.send(1, #"{"id":2,"op":"share.set","user":\#(bob),"level":"approximate"}"#, completions: 1)
        let snapshot = try h.store.loadSocial()
        let restored = HubHarness()
        restored.hub.restore(snapshot)
        #expect(restored.hub.social.rules.level(owner: alice, viewer: bob, now: restored.clock.now()) == .approximate)
        #expect(restored.hub.social.graph.areFriends(alice, bob))
    }
}
