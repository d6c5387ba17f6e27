import CairnCore
import CairnHub
// Cross-node delivery in the protocol layer, with the Redis glue replaced by the test: a node follows the friends
// of the users connected to it (listen on the first, off after the last); a message from another node goes only to
// the watching connections of listed viewers this node follows for that owner, in the owner's latest-wins slot; it
// is kept for a viewer who is not watching yet and shown when they start, but only at a level this node's rules still
// allow (not after a hide or a lower level set here, not once older than watch_max_age, not after the link to Redis
// dropped); a withdrawal empties the slot. On the owner's node, a move is published once, each level encoded
// once as the same `pos` bytes local watchers get, listing only the viewers elsewhere allowed it.
import CairnHubTestSupport
import CairnLoop
import CairnProtocol
import CairnSocial
import Foundation
import Testing

@testable import CairnSessions

/// Presence elsewhere as a set (the mirror of another node).
final class SetRemotePresence: RemotePresence {
    var elsewhere: Set<Int64> = []
    func isOnlineElsewhere(_ user: Int64) -> Bool { elsewhere.contains(user) }
    func localPresenceChanged(_ user: Int64, online: Bool) {}
}

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct ClusterDeliveryTests {
    static func pos(_ owner: Int64, lat: Double) -> [UInt8] {
        Array(#"{"ev":"pos","user":\#(owner),"lat":\#(lat),"lon":1}"#.utf8)
    }

    /// alice (1) and bob (2), carol (3), dave (4) as friends of alice except carol; all but alice connected here.
    static func node() async throws -> (HubHarness, ClusterDelivery) {
        let h = HubHarness()
        let cluster = h.router.attachClusterDelivery()
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        _ = try await h.user(3, "carol")
        let dave = try await h.user(4, "dave")
        try await h.befriend(1, alice, 2, bob)
        try await h.befriend(1, alice, 4, dave)
        h.router.connectionClosed(1)  // alice is on another node
        return (h, cluster)
    }

    @Test func deliversToListedFollowedWatchersOnlyAndKeepsForLaterWatchers() async throws {
        let (h, cluster) = try await Self.node()
        _ = try await h.request(2, #"{"id":5,"op":"friends.watch"}"#, id: 5)
        _ = try await h.request(3, #"{"id":5,"op":"friends.watch"}"#, id: 5)
        cluster.received(.shown, owner: 1, sections: [(0, [2, 3, 4, 77], Self.pos(1, lat: 5))])
        #expect(h.outbound.takeLatest(2)[1]?["lat"] as? Double == 5)
        #expect(h.outbound.takeLatest(3).isEmpty, "carol is not alice's friend here")
        #expect(h.outbound.takeLatest(4).isEmpty, "dave is not watching yet")
        // Dave starts watching: what was heard for him comes after the reply.
        let reply = try await h.request(4, #"{"id":6,"op":"friends.watch"}"#, id: 6)
        #expect((reply["positions"] as? [Any])?.isEmpty == true)
        #expect(h.outbound.takeLatest(4)[1]?["lat"] as? Double == 5)
        // A hide replaces the slot with pos.hidden and forgets what was kept.
        cluster.received(.hidden, owner: 1, sections: [(0, [4], Array(#"{"ev":"pos.hidden","user":1}"#.utf8))])
        #expect(h.outbound.takeLatest(4)[1]?["ev"] as? String == "pos.hidden")
        _ = try await h.request(4, #"{"id":7,"op":"friends.unwatch"}"#, id: 7)
        _ = try await h.request(4, #"{"id":8,"op":"friends.watch"}"#, id: 8)
        #expect(h.outbound.takeLatest(4).isEmpty)
        // A withdrawal empties bob's pending slot.
        cluster.received(.shown, owner: 1, sections: [(0, [2], Self.pos(1, lat: 6))])
        cluster.received(.withdrawn, owner: 1, sections: [(0, [2], [])])
        #expect(h.outbound.takeLatest(2).isEmpty)
    }

    @Test func whatWasKeptIsNotReplayedOnceTooOldOrAfterTheLinkDropped() async throws {
        let (h, cluster) = try await Self.node()
        cluster.received(.shown, owner: 1, sections: [(0, [2], Self.pos(1, lat: 5))])
        h.clock.advance(by: h.hub.configuration.watchMaxAgeMs + 1)
        _ = try await h.request(2, #"{"id":5,"op":"friends.watch"}"#, id: 5)
        #expect(h.outbound.takeLatest(2).isEmpty)
        // Heard, then Redis went away (a hide published meanwhile would be lost): nothing is replayed.
        cluster.received(.shown, owner: 1, sections: [(0, [4], Self.pos(1, lat: 6))])
        cluster.linkLost()
        _ = try await h.request(4, #"{"id":6,"op":"friends.watch"}"#, id: 6)
        #expect(h.outbound.takeLatest(4).isEmpty)
    }

    @Test func onlyOneLinePositionEventsReachASocket() async throws {
        let (h, cluster) = try await Self.node()
        _ = try await h.request(2, #"{"id":5,"op":"friends.watch"}"#, id: 5)
        for forged in [
            Array(#"{"ev":"chat","text":"hi"}"#.utf8), Array("{\"ev\":\"pos\",\"user\":1}\n{\"ev\":\"x\"}".utf8),
            Array(#"{"ev":"pos""#.utf8), [],
        ] {
            cluster.received(.shown, owner: 1, sections: [(0, [2], forged)])
            #expect(h.outbound.latest[2]?[1] == nil, "\(String(decoding: forged, as: UTF8.self))")
        }
        cluster.received(.shown, owner: 1, sections: [(0, [2], Self.pos(1, lat: 7))])
        #expect(h.outbound.takeLatest(2)[1]?["lat"] as? Double == 7)
    }

    @Test(arguments: ["hidden", "approximate"])
    func preciseBytesHeardBeforeALowerLevelSetHereAreNeverReplayed(level: String) async throws {
        // Alice (1) moves on another node while bob (2) is connected here, not watching; then alice, also
        // connected here, lowers bob's level. Bob's later watch must not bring back the precise position.
        let (h, cluster) = try await Self.node()
        cluster.received(.shown, owner: 1, sections: [(0, [2], Self.pos(1, lat: 5))])
        h.router.connectionOpened(10, token: nil)
        _ = try await h.request(
            10, #"{"id":2,"op":"login","username":"alice","password":"password1"}"#, id: 2, completions: 1)
        _ = try await h.request(
            10, #"{"id":3,"op":"share.set","user":2,"level":"\#(level)"}"#, id: 3, completions: 1)
        _ = try await h.request(2, #"{"id":5,"op":"friends.watch"}"#, id: 5)
        let slots = h.outbound.takeLatest(2)
        #expect(slots[1]?["lat"] as? Double != 5, "\(slots)")
    }

    @Test func aSectionAboveWhatThisNodesRulesAllowNowIsHeldBack() async throws {
        // Alice's node encoded a move before it applied her hide; this node applied it first (the control message
        // reached it sooner). Bob, watching here, must not get the precise position; an approximate viewer may get
        // approximate bytes, never precise ones.
        let (h, cluster) = try await Self.node()
        _ = try await h.request(2, #"{"id":5,"op":"friends.watch"}"#, id: 5)
        _ = try await h.request(4, #"{"id":5,"op":"friends.watch"}"#, id: 5)
        let version = h.clock.now() * 1000 + 10
        h.hub.social.applyRemoteRule(owner: 1, viewer: 2, level: .hidden, until: nil, version: version)
        h.hub.social.applyRemoteRule(owner: 1, viewer: 4, level: .approximate, until: nil, version: version)
        _ = h.outbound.takeLatest(2)
        _ = h.outbound.takeLatest(4)
        cluster.received(.shown, owner: 1, sections: [(0, [2, 4], Self.pos(1, lat: 5))])
        #expect(h.outbound.takeLatest(2).isEmpty, "hidden here: nothing")
        #expect(h.outbound.takeLatest(4).isEmpty, "approximate here: no precise bytes")
        cluster.received(.shown, owner: 1, sections: [(1, [2, 4], Self.pos(1, lat: 6))])
        #expect(h.outbound.takeLatest(2).isEmpty)
        #expect(h.outbound.takeLatest(4)[1]?["lat"] as? Double == 6)
        // What is hidden still goes (pos.hidden is never more than allowed).
        cluster.received(.hidden, owner: 1, sections: [(0, [2], Array(#"{"ev":"pos.hidden","user":1}"#.utf8))])
        #expect(h.outbound.takeLatest(2)[1]?["ev"] as? String == "pos.hidden")
    }

    @Test func approximateBytesAreReplayedToAnApproximateViewer() async throws {
        let (h, cluster) = try await Self.node()
        h.router.connectionOpened(10, token: nil)
        _ = try await h.request(
            10, #"{"id":2,"op":"login","username":"alice","password":"password1"}"#, id: 2, completions: 1)
        _ = try await h.request(
            10, #"{"id":3,"op":"share.set","user":2,"level":"approximate"}"#, id: 3, completions: 1)
        cluster.received(.shown, owner: 1, sections: [(1, [2], Self.pos(1, lat: 5.5))])
        _ = try await h.request(2, #"{"id":5,"op":"friends.watch"}"#, id: 5)
        #expect(h.outbound.takeLatest(2)[1]?["lat"] as? Double == 5.5)
    }

    @Test func listensWhileSomeFriendIsConnectedHere() async throws {
        let h = HubHarness()
        let cluster = h.router.attachClusterDelivery()
        var heard: [String] = []
        cluster.listen = { owner, on in heard.append("\(on ? "+" : "-")\(owner)") }
        let alice = try await h.user(1, "alice")
        let bob = try await h.user(2, "bob")
        let dave = try await h.user(4, "dave")
        try await h.befriend(1, alice, 2, bob)
        try await h.befriend(1, alice, 4, dave)
        // Each side follows the other: a channel for alice (bob and dave here), bob and dave (alice here).
        #expect(Set(heard) == ["+\(alice)", "+\(bob)", "+\(dave)"] && heard.count == 3)
        h.router.connectionClosed(1)  // alice gone: nobody here follows bob or dave any more
        #expect(Set(heard.dropFirst(3)) == ["-\(bob)", "-\(dave)"] && heard.count == 5)
        h.router.connectionClosed(2)  // dave still follows alice
        #expect(heard.count == 5)
        h.router.connectionClosed(4)
        #expect(heard.last == "-\(alice)" && heard.count == 6)
        #expect(cluster.followedCount == 0)
    }

    @Test func aMoveIsPublishedOncePerLevelForTheViewersElsewhere() async throws {
        let h = HubHarness()
        let presence = SetRemotePresence()
        h.hub.sessions.remotePresence = presence
        let cluster = h.router.attachClusterDelivery()
        var sent: [(kind: ClusterDelivery.Kind, owner: Int64, sections: [ClusterDelivery.Section])] = []
        cluster.send = { sent.append(($0, $1, $2)) }
        let alice = try await h.user(1, "alice")
        for (connection, name) in [(2, "bob"), (3, "carol"), (4, "dave"), (5, "erin")] {
            let id = try await h.user(ConnectionID(connection), name)
            try await h.befriend(1, alice, ConnectionID(connection), id)
        }
        _ = try await h.request(1, #"{"id":5,"op":"share.set","user":3,"level":"approximate"}"#, id: 5, completions: 1)
        _ = try await h.request(1, #"{"id":6,"op":"share.set","user":4,"level":"hidden"}"#, id: 6, completions: 1)
        _ = try await h.request(5, #"{"id":7,"op":"friends.watch"}"#, id: 7)
        for connection: ConnectionID in 2...4 { h.router.connectionClosed(connection) }
        presence.elsewhere = [2, 3, 4]
        sent.removeAll()
        h.move(1, lat: 48.85661, lon: 2.35222)
        #expect(sent.count == 1)
        let message = try #require(sent.first)
        #expect(message.kind == .shown && message.owner == alice)
        #expect(message.sections.map(\.tag) == [0, 1])
        #expect(message.sections.map(\.viewers) == [[2], [3]])
        let precise = try JSONSerialization.jsonObject(with: Data(message.sections[0].payload)) as? [String: Any]
        let approximate = try JSONSerialization.jsonObject(with: Data(message.sections[1].payload)) as? [String: Any]
        #expect(precise?["lat"] as? Double == 48.85661 && precise?["acc"] as? Double == 5)
        #expect(approximate?["approx"] as? Bool == true && approximate?["lat"] as? Double != 48.85661)
        // The local watcher got the very same precise bytes.
        #expect(h.outbound.latest[5]?[alice] == message.sections[0].payload)
    }
}
