// Presence across nodes through a real redis-server: two nodes (two links, as two processes would have) on one
// test loop. A user online on node a is online elsewhere for node b at once (the channel) and after a refresh (the
// sorted set); a node that stops refreshing drops out within the TTL; while Redis is away the mirror is empty, and
// after Redis returns (empty: no persistence) each node puts its users back. A user appearing on a node where they
// were not is reported as arrived, even when already online on a third (owners answer with a snapshot).
import CairnTestSupport
import Foundation
import Testing

@testable import CairnCluster

@Suite(
    .serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed"), .timeLimit(.minutes(5)))
struct ClusterPresenceTests {
    final class Node {
        let link: RedisLink
        let presence: ClusterPresence
        var changes: [String] = []
        var arrivals: [Int64] = []

        init(_ name: String, _ redis: RedisServerProcess, _ loop: TestLoop, refresh: Double = 0.2) throws {
            link = RedisLink(
                endpoint: try RedisEndpoint(url: redis.url), loop: loop.loop, confinement: loop.confinement,
                backoff: ReconnectBackoff(base: 0.05, cap: 0.2))
            presence = ClusterPresence(
                link: link, loop: loop.loop, node: name, prefix: "t", refreshSeconds: refresh,
                now: { Int64(Date().timeIntervalSince1970 * 1000) })
            presence.remoteChanged = { [unowned self] user, online in
                self.changes.append("\(online ? "+" : "-")\(user)")
            }
            presence.arrived = { [unowned self] user in self.arrivals.append(user) }
            presence.start()
            link.start()
        }

        func stop() {
            presence.stop()
            link.stop()
        }
    }

    @Test func onlineOnOneNodeIsOnlineElsewhereForTheOther() throws {
        let redis = try RedisServerProcess()
        let loop = TestLoop()
        let a = try Node("a", redis, loop)
        let b = try Node("b", redis, loop)
        defer {
            a.stop()
            b.stop()
        }
        #expect(loop.spin { a.link.isUp && b.link.isUp && a.presence.refreshes > 0 && b.presence.refreshes > 0 })
        a.presence.localChanged(7, online: true)
        #expect(loop.spin { b.presence.isOnlineElsewhere(7) })
        #expect(!a.presence.isOnlineElsewhere(7))  // a node's own users are not "elsewhere" for it
        #expect(b.changes == ["+7"])
        // The sorted set agrees: a later refresh keeps it.
        let seen = b.presence.refreshes
        #expect(loop.spin { b.presence.refreshes > seen + 1 })
        #expect(b.presence.isOnlineElsewhere(7))
        // On both nodes: one going offline leaves the user online elsewhere for the other.
        b.presence.localChanged(7, online: true)
        #expect(loop.spin { a.presence.isOnlineElsewhere(7) })
        a.presence.localChanged(7, online: false)
        #expect(loop.spin { !b.presence.isOnlineElsewhere(7) })
        #expect(a.presence.isOnlineElsewhere(7))
        #expect(b.changes == ["+7", "-7"])
    }

    @Test func aNodeThatStopsRefreshingExpires() throws {
        let redis = try RedisServerProcess()
        let loop = TestLoop()
        let a = try Node("a", redis, loop)
        let b = try Node("b", redis, loop)
        defer { b.stop() }
        #expect(loop.spin { a.link.isUp && b.link.isUp })
        a.presence.localChanged(42, online: true)
        #expect(loop.spin { b.presence.isOnlineElsewhere(42) })
        a.presence.stop()  // a node that dies says nothing: its members only expire (TTL 0.6 s here)
        a.link.stop()
        #expect(loop.spin(timeout: 5) { !b.presence.isOnlineElsewhere(42) })
        #expect(b.changes == ["+42", "-42"])
    }

    @Test func redisAwayEmptiesTheMirrorAndItsReturnRestoresIt() throws {
        let redis = try RedisServerProcess()
        let loop = TestLoop()
        let a = try Node("a", redis, loop)
        let b = try Node("b", redis, loop)
        defer {
            a.stop()
            b.stop()
        }
        #expect(loop.spin { a.link.isUp && b.link.isUp })
        a.presence.localChanged(5, online: true)
        #expect(loop.spin { b.presence.isOnlineElsewhere(5) })
        redis.kill()
        #expect(loop.spin { !b.link.isUp })
        #expect(!b.presence.isOnlineElsewhere(5))  // fail closed
        a.presence.localChanged(6, online: true)  // while away: remembered locally, sent at the next refresh
        try redis.restart()  // empty: no persistence
        #expect(loop.spin { b.presence.isOnlineElsewhere(5) && b.presence.isOnlineElsewhere(6) })
        #expect(a.link.reconnects == 1 && b.link.reconnects == 1)
    }

    @Test func aUserAppearingOnAnotherNodeArrivesEvenWhenOnlineOnAThird() throws {
        let redis = try RedisServerProcess()
        let loop = TestLoop()
        let a = try Node("a", redis, loop)
        let b = try Node("b", redis, loop)
        let c = try Node("c", redis, loop)
        defer {
            a.stop()
            b.stop()
            c.stop()
        }
        #expect(loop.spin { a.link.isUp && b.link.isUp && c.link.isUp && b.presence.refreshes > 0 })
        a.presence.localChanged(7, online: true)
        #expect(loop.spin { b.arrivals == [7] })
        c.presence.localChanged(7, online: true)  // still online elsewhere for b: no presence change, an arrival
        #expect(loop.spin { b.arrivals == [7, 7] })
        #expect(b.changes == ["+7"])
        // Later refreshes rebuild the same mirror: no new arrivals.
        let seen = b.presence.refreshes
        #expect(loop.spin { b.presence.refreshes > seen + 1 })
        #expect(b.arrivals == [7, 7])
    }

    @Test func anArrivalIsAnnouncedOnlyOnceTheSubscriptionsAskedBeforeItAreConfirmed() throws {
        let redis = try RedisServerProcess()
        let loop = TestLoop()
        let a = try Node("a", redis, loop, refresh: 5)
        let b = try Node("b", redis, loop, refresh: 5)
        defer {
            a.stop()
            b.stop()
        }
        #expect(loop.spin { a.link.isUp && b.link.isUp })
        var subscribed = 0  // both nodes hear the presence channel
        a.link.afterSubscriptions { if $0 { subscribed += 1 } }
        b.link.afterSubscriptions { if $0 { subscribed += 1 } }
        #expect(loop.spin { subscribed == 2 })
        // Node a answers every arrival on the user's "friend" channel at once, as owners answer with a position.
        a.presence.arrived = { user in a.link.publish("t:u:\(user + 1000)", Array("answer \(user)".utf8)) }
        var answers: [String] = []
        for user: Int64 in 1...30 {
            // Node b follows the user's friend (SUBSCRIBE on its pub/sub connection), then announces the user.
            b.link.subscribe("t:u:\(user + 1000)") { answers.append(String(decoding: $0, as: UTF8.self)) }
            b.presence.localChanged(user, online: true)
            #expect(b.link.heldUntilSubscribed == 1, "the news waits for the SUBSCRIBE sent before it")
            #expect(loop.spin { answers.count == Int(user) }, "the answer to \(user) arrived")
        }
        #expect(answers == (1...30).map { "answer \($0)" })
    }

    @Test func aLeaveRightAfterAnArrivalDoesNotOvertakeIt() throws {
        let redis = try RedisServerProcess()
        let loop = TestLoop()
        let a = try Node("a", redis, loop, refresh: 5)
        let b = try Node("b", redis, loop, refresh: 5)
        defer {
            a.stop()
            b.stop()
        }
        #expect(loop.spin { a.link.isUp && b.link.isUp })
        var subscribed = 0  // both nodes hear the presence channel
        a.link.afterSubscriptions { if $0 { subscribed += 1 } }
        b.link.afterSubscriptions { if $0 { subscribed += 1 } }
        #expect(loop.spin { subscribed == 2 })
        b.link.subscribe("t:u:1009") { _ in }
        b.presence.localChanged(9, online: true)  // held behind the SUBSCRIBE
        b.presence.localChanged(9, online: false)  // nothing to wait for of its own, but after the arrival
        #expect(b.link.heldUntilSubscribed == 2)
        #expect(loop.spin { a.changes == ["+9", "-9"] })
        b.presence.localChanged(10, online: true)  // a later user: a hears it, so the leave was heard before
        #expect(loop.spin { a.presence.isOnlineElsewhere(10) })
        #expect(!a.presence.isOnlineElsewhere(9) && a.changes == ["+9", "-9", "+10"])
        // Redis agrees: a refresh of a's mirror keeps 9 offline.
        a.presence.refresh()
        let seen = a.presence.refreshes
        #expect(loop.spin { a.presence.refreshes > seen })
        #expect(!a.presence.isOnlineElsewhere(9) && a.presence.isOnlineElsewhere(10))
    }
}
