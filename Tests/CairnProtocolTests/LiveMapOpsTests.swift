import CairnCore
import CairnHub
import CairnHubTestSupport
import CairnLoop
import CairnProtocol
import CairnSocial
import CairnSpatial
import Synchronization
import Testing

@testable import CairnLiveMap

// Positions and the observer fan-out through the hub: validation, stale and flagged fixes, watch/unwatch,
// friends-only delivery, latest-wins coalescing, presence.

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct HubPositionsTests {
    func twoFriends() async throws -> (HubHarness, Int64, Int64) {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        try await h.befriend(1, alice, 2, bob)
        return (h, alice, bob)
    }

    @Test func watcherReceivesFriendsMovesAndWatchListsLastPositions() async throws {
        let (h, alice, _) = try await twoFriends()
        h.move(1, lat: 48.85, lon: 2.35)
        let watch = try await h.request(2, #"{"id":5,"op":"friends.watch"}"#, id: 5)
        let positions = try #require(watch["positions"] as? [[String: Any]])
        #expect(positions.count == 1)
        #expect(positions[0]["user"] as? Int == Int(alice))
        #expect(positions[0]["lat"] as? Double == 48.85)
        h.move(1, lat: 48.86, lon: 2.36)
        let pushed = try #require(h.outbound.takeLatest(2)[alice])
        #expect(pushed["ev"] as? String == "pos")
        #expect(pushed["lat"] as? Double == 48.86)
        #expect(pushed["acc"] as? Double == 5)
    }

    @Test func nonFriendsAndNonWatchersReceiveNothing() async throws {
        let (h, _, _) = try await twoFriends()
        _ = try await h.user(3, "mallory")
        _ = try await h.request(3, #"{"id":5,"op":"friends.watch"}"#, id: 5)
        h.move(1, lat: 1, lon: 1)
        #expect(h.outbound.takeLatest(3).isEmpty)
        #expect(h.outbound.takeLatest(2).isEmpty)  // bob is a friend but not watching
    }

    @Test func pendingPositionsCoalesceToTheLatest() async throws {
        let (h, alice, _) = try await twoFriends()
        _ = try await h.request(2, #"{"id":5,"op":"friends.watch"}"#, id: 5)
        for i in 1...50 { h.move(1, lat: 10 + Double(i) * 0.0001, lon: 10) }
        let pending = h.outbound.latest[2] ?? [:]
        #expect(pending.count == 1)
        #expect(h.outbound.takeLatest(2)[alice]?["lat"] as? Double == 10.005)
    }

    @Test func unwatchStopsPushes() async throws {
        let (h, _, _) = try await twoFriends()
        _ = try await h.request(2, #"{"id":5,"op":"friends.watch"}"#, id: 5)
        _ = try await h.request(2, #"{"id":6,"op":"friends.unwatch"}"#, id: 6)
        h.move(1, lat: 3, lon: 3)
        #expect(h.outbound.takeLatest(2).isEmpty)
    }

    @Test func removingAFriendStopsPushesAndWithdrawsPending() async throws {
        let (h, _, bob) = try await twoFriends()
        _ = try await h.request(2, #"{"id":5,"op":"friends.watch"}"#, id: 5)
        h.move(1, lat: 5, lon: 5)
        #expect(!(h.outbound.latest[2] ?? [:]).isEmpty)
        try await h.send(1, #"{"id":7,"op":"friend.remove","user":\#(bob)}"#)  // no completion run yet
        #expect((h.outbound.latest[2] ?? [:]).isEmpty)  // withdrawn before the commit
        h.move(1, lat: 6, lon: 6)
        #expect((h.outbound.latest[2] ?? [:]).isEmpty)
        try await h.scheduler.run()
    }

    @Test(arguments: [
        (#"{"id":1,"op":"pos","lat":91,"lon":0}"#, "lat"), (#"{"id":1,"op":"pos","lat":0,"lon":-180.5}"#, "lon"),
        (#"{"id":1,"op":"pos","lon":0}"#, "lat"), (#"{"id":1,"op":"pos","lat":"1","lon":0}"#, "lat"),
        (#"{"id":1,"op":"pos","lat":0,"lon":0,"hdg":360}"#, "hdg"),
        (#"{"id":1,"op":"pos","lat":0,"lon":0,"bat":101}"#, "bat"),
        (#"{"id":1,"op":"pos","lat":0,"lon":0,"acc":-1}"#, "acc"),
        (#"{"id":1,"op":"pos","lat":0,"lon":0,"spd":-2}"#, "spd"),
        (#"{"id":1,"op":"pos","lat":0,"lon":0,"ts":1.5}"#, "ts"),
        (#"{"id":1,"op":"pos","lat":0,"lon":0,"ts":-5}"#, "ts"),
    ])
    func badPositionsAreRefusedNamingTheField(_ text: String, _ field: String) async throws {
        let h = HubHarness()
        _ = try await h.user(1, "alice")
        let reply = try await h.request(1, text)
        #expect(errorCode(reply) == "bad_request")
        #expect(((reply["error"] as? [String: Any])?["message"] as? String)?.contains("'\(field)'") == true)
        #expect(h.hub.livePositions == 0)
    }

    @Test func futureTimestampIsRefused() async throws {
        let h = HubHarness()
        _ = try await h.user(1, "alice")
        let future = h.clock.now() + 5 * 60 * 1000 + 1
        let reply = try await h.request(1, #"{"id":1,"op":"pos","lat":1,"lon":1,"ts":\#(future)}"#)
        #expect(errorCode(reply) == "bad_request")
        let fine = try await h.request(1, #"{"id":2,"op":"pos","lat":1,"lon":1,"ts":\#(future - 2)}"#, id: 2)
        #expect(fine["ok"] as? Bool == true)
    }

    @Test func olderFixIsHistoryNotNews() async throws {
        let (h, alice, _) = try await twoFriends()
        _ = try await h.request(2, #"{"id":5,"op":"friends.watch"}"#, id: 5)
        let now = h.clock.now()
        h.move(1, lat: 10, lon: 10, ts: now)
        _ = h.outbound.takeLatest(2)
        let stale = try await h.request(1, #"{"id":9,"op":"pos","lat":20,"lon":20,"ts":\#(now - 1000)}"#, id: 9)
        #expect(stale["stale"] as? Bool == true)
        #expect(h.outbound.takeLatest(2).isEmpty)
        #expect(h.hub.liveMap.fixes[alice]?.lat == 10)
        h.hub.flushPositionsNow()
        try await h.settle()
        #expect(h.store.state.withLock { $0.history.map(\.fix.lat) } == [20])
        #expect(h.store.state.withLock { $0.positions[alice]?.lat } == 10)
    }

    @Test func implausibleSpeedIsFlaggedNotDropped() async throws {
        let (h, alice, _) = try await twoFriends()
        _ = try await h.request(2, #"{"id":5,"op":"friends.watch"}"#, id: 5)
        let now = h.clock.now()
        h.move(1, lat: 0, lon: 0, ts: now - 1000)
        // ~111 km in one second.
        let reply = try await h.request(1, #"{"id":3,"op":"pos","lat":1,"lon":0,"ts":\#(now)}"#, id: 3)
        #expect(reply["flagged"] as? Bool == true)
        #expect(h.outbound.takeLatest(2)[alice]?["flagged"] as? Bool == true)
        #expect(h.hub.liveMap.fixes[alice]?.lat == 1)
    }

    @Test func presenceGoesOnlineAndOfflineForFriends() async throws {
        let (h, alice, _) = try await twoFriends()
        h.router.connectionClosed(1)
        let offline = try #require(h.outbound.take(2).first { $0["ev"] as? String == "presence" })
        #expect(offline["user"] as? Int == Int(alice))
        #expect(offline["online"] as? Bool == false)
        // A second connection of bob's does not re-announce him; alice logging back in does announce her.
        h.router.connectionOpened(3, token: nil)
        try await h.send(3, #"{"id":1,"op":"login","username":"alice","password":"password1"}"#, completions: 1)
        let online = try #require(h.outbound.take(2).first { $0["ev"] as? String == "presence" })
        #expect(online["online"] as? Bool == true)
    }

    @Test func loggingInAgainAsTheSameUserCausesNoPresenceFlicker() async throws {
        let (h, _, _) = try await twoFriends()
        try await h.send(1, #"{"id":8,"op":"login","username":"alice","password":"password1"}"#, completions: 1)
        #expect(!h.outbound.take(2).contains { $0["ev"] as? String == "presence" })
    }

    @Test func positionsEnterTheSpatialIndex() async throws {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        h.move(1, lat: 37.7749, lon: -122.4194)
        let centre = try #require(GeoPointFactory.point(37.7750, -122.4194))
        let found = h.hub.liveMap.index.query(in: .users, within: 50, of: centre).map(\.id)
        #expect(found == [alice])
    }
}
