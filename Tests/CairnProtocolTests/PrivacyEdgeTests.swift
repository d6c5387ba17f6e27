import CairnCore
import CairnHub
import CairnHubTestSupport
import CairnLoop
import CairnProtocol
import Synchronization
import Testing

// The privacy edges of issue 11 (items 9–13), through the router and the hub: what a relic says about a creator who
// hides, what approximate viewers learn at a cell's edge and from `ts`, presence of users who pause or hide, and how
// old a position `friends.watch` may still show. Each test failed before its fix.
@testable import CairnLiveMap

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct PrivacyEdgeTests {
    /// Alice (connection 1) and bob (connection 2), friends, both standing at the same place.
    func friendsTogether() async throws -> (HubHarness, Int64, Int64) {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        try await h.befriend(1, alice, 2, bob)
        h.stand(1, lat: 48.85, lon: 2.35)  // confirmed, so relics trust it
        h.stand(2, lat: 48.85, lon: 2.35)
        _ = h.outbound.take(1)
        _ = h.outbound.take(2)
        return (h, alice, bob)
    }

    func presence(_ h: HubHarness, _ connection: ConnectionID) -> [Bool] {
        h.outbound.take(connection).filter { $0["ev"] as? String == "presence" }.compactMap { $0["online"] as? Bool }
    }

    func listedOnline(_ h: HubHarness, _ connection: ConnectionID, friend: Int64) async throws -> Bool? {
        let reply = try await h.request(connection, #"{"id":7,"op":"friend.list"}"#, id: 7, completions: 1)
        let friends = try #require(reply["friends"] as? [[String: Any]])
        return friends.first { $0["id"] as? Int == Int(friend) }?["online"] as? Bool
    }

    // MARK: 9. Relics in ghost mode

    @Test func noRelicIsLeftWhilePaused() async throws {
        let (h, _, _) = try await friendsTogether()
        _ = try await h.request(1, #"{"id":2,"op":"share.pause"}"#, id: 2, completions: 1)
        let refused = try await h.request(1, #"{"id":3,"op":"relic.create","text":"here","radius":50}"#, id: 3)
        #expect(errorCode(refused) == "forbidden")
        let message = (refused["error"] as? [String: Any])?["message"] as? String
        #expect(message?.contains("share.pause") == true)
        #expect(h.content.state.withLock { $0.relics.isEmpty })
        _ = try await h.request(1, #"{"id":4,"op":"share.resume"}"#, id: 4, completions: 1)
        let left = try await h.request(
            1, #"{"id":5,"op":"relic.create","text":"here","radius":50}"#, id: 5,
            completions: 1)
        #expect(left["relic"] != nil)
    }

    @Test func aRelicLeftWhileHidingNamesItsCreatorToNobodyElseForGood() async throws {
        let (h, alice, bob) = try await friendsTogether()
        _ = try await h.request(
            1, #"{"id":2,"op":"share.set","user":\#(bob),"level":"hidden"}"#, id: 2,
            completions: 1)
        _ = h.outbound.take(2)
        let created = try await h.request(
            1, #"{"id":3,"op":"relic.create","text":"here","radius":50}"#, id: 3,
            completions: 1)
        let relic = try #require(created["relic"] as? [String: Any])
        #expect(relic["creator"] as? Int == Int(alice))  // the creator's own view names them
        let id = try #require(relic["id"] as? Int)
        // Bob stands inside it: the marker pushed to him names nobody.
        let appear = try #require(h.outbound.take(2).first { $0["ev"] as? String == "relic.appear" })
        let marker = try #require(appear["relic"] as? [String: Any])
        #expect(marker["id"] as? Int == id && marker["creator"] == nil)
        // Revealing later does not name the creator of what was left while hidden.
        _ = try await h.request(
            1, #"{"id":4,"op":"share.set","user":\#(bob),"level":"precise"}"#, id: 4,
            completions: 1)
        let nearby = try await h.request(2, #"{"id":5,"op":"relic.nearby"}"#, id: 5)
        let listed = try #require((nearby["relics"] as? [[String: Any]])?.first)
        #expect(listed["id"] as? Int == id && listed["creator"] == nil)
        let opened = try await h.request(2, #"{"id":6,"op":"relic.open","relic":\#(id)}"#, id: 6, completions: 1)
        let content = try #require(opened["relic"] as? [String: Any])
        #expect(content["text"] as? String == "here")
        #expect(content["creator"] == nil && content["creator_user"] == nil)
        // The creator still sees their own relic as theirs.
        let own = try await h.request(1, #"{"id":7,"op":"relic.nearby"}"#, id: 7)
        #expect((own["relics"] as? [[String: Any]])?.first?["creator"] as? Int == Int(alice))
        // One left while sharing precisely with everyone names its creator as before.
        let later = try await h.request(
            1, #"{"id":8,"op":"relic.create","text":"now","radius":50}"#, id: 8,
            completions: 1)
        let laterID = try #require((later["relic"] as? [String: Any])?["id"] as? Int)
        let again = try await h.request(2, #"{"id":9,"op":"relic.nearby"}"#, id: 9)
        let named = (again["relics"] as? [[String: Any]])?.first { $0["id"] as? Int == laterID }
        #expect(named?["creator"] as? Int == Int(alice))
    }

    @Test func anApproximateViewerLearnsNoCreatorEither() async throws {
        let (h, _, bob) = try await friendsTogether()
        _ = try await h.request(
            1, #"{"id":2,"op":"share.set","user":\#(bob),"level":"approximate"}"#, id: 2,
            completions: 1)
        let created = try await h.request(
            1, #"{"id":3,"op":"relic.create","text":"here","radius":50}"#, id: 3,
            completions: 1)
        #expect((created["relic"] as? [String: Any])?["creator"] != nil)
        let nearby = try await h.request(2, #"{"id":5,"op":"relic.nearby"}"#, id: 5)
        #expect((nearby["relics"] as? [[String: Any]])?.first?["creator"] == nil)
    }

    // MARK: 10. Approximate cells: hysteresis and coarse time

    @Test func jitterAroundACellEdgeDoesNotFlipTheCell() async throws {
        let (h, alice, bob) = try await friendsTogether()
        _ = try await h.request(
            1, #"{"id":2,"op":"share.set","user":\#(bob),"level":"approximate"}"#, id: 2,
            completions: 1)
        let watched = try await h.request(2, #"{"id":3,"op":"friends.watch"}"#, id: 3)
        _ = h.outbound.takeLatest(2)
        let first = try #require((watched["positions"] as? [[String: Any]])?.first)
        #expect(first["approx"] as? Bool == true)
        let southLat = try #require(first["lat"] as? Double)
        // The northern edge of the row holding 48.85° (0.001° of latitude is about 111 m).
        let grid = ApproximateGrid(cellSize: h.hub.configuration.approximateCellSize)
        var edge = 48.85
        let row = grid.cell(lat: 48.85, lon: 2.35).row
        while grid.cell(lat: edge, lon: 2.35).row == row { edge += 0.0001 }
        h.clock.advance(by: 12_345)
        h.move(1, lat: edge - 0.0005, lon: 2.35)  // still inside, 55 m south of the edge
        #expect(h.outbound.takeLatest(2).isEmpty)
        for lat in [edge + 0.0009, edge - 0.0005, edge + 0.0015, edge - 0.0001] {  // jitter up to 170 m past it
            h.clock.advance(by: 1_000)
            h.move(1, lat: lat, lon: 2.35)
            #expect(h.outbound.takeLatest(2).isEmpty, "moved to \(lat)")
        }
        h.clock.advance(by: 1_000)
        h.move(1, lat: edge + 0.0027, lon: 2.35)  // 300 m past the edge: now in the next cell
        let north = try #require(h.outbound.takeLatest(2)[alice])
        let northLat = try #require(north["lat"] as? Double)
        #expect(northLat > southLat)
        let ts = try #require(north["ts"] as? Int)
        #expect(ts % 60_000 == 0 && Int(h.clock.now()) - ts < 60_000 && ts != Int(h.clock.now()))  // to the minute
        // And back just over the edge, within the margin of the new cell: nothing.
        h.clock.advance(by: 1_000)
        h.move(1, lat: edge - 0.0009, lon: 2.35)
        #expect(h.outbound.takeLatest(2).isEmpty)
        // The watch snapshot shows the same cell, with the time to the minute.
        let watch = try await h.request(2, #"{"id":4,"op":"friends.watch"}"#, id: 4)
        let listed = try #require((watch["positions"] as? [[String: Any]])?.first { $0["user"] as? Int == Int(alice) })
        #expect(listed["lat"] as? Double == northLat)
        #expect((listed["ts"] as? Int).map { $0 % 60_000 } == 0)
    }

    @Test func theHysteresisIsAnOption() async throws {
        let h = HubHarness { $0.approximateHysteresis = 0 }
        let grid = ApproximateGrid(cellSize: h.hub.configuration.approximateCellSize)
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        try await h.befriend(1, alice, 2, bob)
        _ = try await h.request(
            1, #"{"id":2,"op":"share.set","user":\#(bob),"level":"approximate"}"#, id: 2,
            completions: 1)
        _ = try await h.request(2, #"{"id":3,"op":"friends.watch"}"#, id: 3)
        var edge = 48.85
        let row = grid.cell(lat: 48.85, lon: 2.35).row
        while grid.cell(lat: edge, lon: 2.35).row == row { edge += 0.0001 }
        h.move(1, lat: edge - 0.0005, lon: 2.35)
        _ = h.outbound.takeLatest(2)
        h.move(1, lat: edge + 0.0005, lon: 2.35)
        #expect(h.outbound.takeLatest(2)[alice] != nil)  // without a margin the edge flips at once
    }

    // MARK: 11. Presence

    @Test func usersWhoHideAppearOfflineToThoseTheyHideFrom() async throws {
        let (h, alice, bob) = try await friendsTogether()
        let carol = try await h.user(3, "carol")
        try await h.befriend(1, alice, 3, carol)
        _ = h.outbound.take(2)
        _ = h.outbound.take(3)
        _ = try await h.request(
            1, #"{"id":2,"op":"share.set","user":\#(bob),"level":"hidden"}"#, id: 2,
            completions: 1)
        #expect(presence(h, 2) == [false])
        #expect(presence(h, 3).isEmpty)
        #expect(try await listedOnline(h, 2, friend: alice) == false)
        #expect(try await listedOnline(h, 3, friend: alice) == true)
        // Coming and going is told only to those she does not hide from.
        h.router.connectionClosed(1)
        #expect(presence(h, 2).isEmpty && presence(h, 3) == [false])
        h.router.connectionOpened(4, token: nil)
        try await h.send(4, #"{"id":1,"op":"login","username":"alice","password":"password1"}"#, completions: 1)
        #expect(presence(h, 2).isEmpty && presence(h, 3) == [true])
        // Revealing herself again shows her online.
        _ = try await h.request(
            4, #"{"id":3,"op":"share.set","user":\#(bob),"level":"precise"}"#, id: 3,
            completions: 1)
        #expect(presence(h, 2) == [true])
        #expect(try await listedOnline(h, 2, friend: alice) == true)
        // Approximate is not hidden: no presence change.
        _ = try await h.request(
            4, #"{"id":4,"op":"share.set","user":\#(bob),"level":"approximate"}"#, id: 4,
            completions: 1)
        #expect(presence(h, 2).isEmpty)
    }

    @Test func pausingGoesOfflineForEveryoneAndATimedPauseComesBack() async throws {
        let (h, alice, _) = try await friendsTogether()
        _ = try await h.request(1, #"{"id":2,"op":"share.pause","for":60}"#, id: 2, completions: 1)
        #expect(presence(h, 2) == [false])
        #expect(try await listedOnline(h, 2, friend: alice) == false)
        h.clock.advance(by: 60_000)
        h.hub.tick()
        // The tick's first purges run off the loop: let them finish, or their completions pass for a reply's.
        while h.hub.operationsInFlight > 0 { try await h.scheduler.run() }
        #expect(presence(h, 2) == [true])
        #expect(try await listedOnline(h, 2, friend: alice) == true)
        // Pausing and resuming while offline tells nobody anything.
        _ = try await h.request(1, #"{"id":3,"op":"share.pause"}"#, id: 3, completions: 1)
        #expect(presence(h, 2) == [false])
        h.router.connectionClosed(1)
        #expect(presence(h, 2).isEmpty)
    }

    // MARK: 13. Old positions in friends.watch

    @Test func watchLeavesOutOldPositionsAndMarksStaleOnes() async throws {
        let h = HubHarness()
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        let carol = try await h.user(3, "carol")
        try await h.befriend(1, alice, 2, bob)
        try await h.befriend(3, carol, 2, bob)
        h.move(1, lat: 48.85, lon: 2.35)
        h.clock.advance(by: 10 * 60_000)
        h.move(3, lat: 48.86, lon: 2.36)
        func watched() async throws -> [Int: [String: Any]] {
            let watch = try await h.request(2, #"{"id":5,"op":"friends.watch"}"#, id: 5)
            let positions = try #require(watch["positions"] as? [[String: Any]])
            return Dictionary(uniqueKeysWithValues: positions.map { ($0["user"] as? Int ?? 0, $0) })
        }
        var seen = try await watched()
        #expect(seen[Int(alice)]?["stale"] as? Bool == true)  // ten minutes old
        #expect(seen[Int(carol)] != nil && seen[Int(carol)]?["stale"] == nil)
        h.clock.advance(by: 24 * 3600_000 - 5 * 60_000)
        seen = try await watched()
        #expect(seen[Int(alice)] == nil)  // older than a day: left out
        #expect(seen[Int(carol)]?["stale"] as? Bool == true)
    }
}
