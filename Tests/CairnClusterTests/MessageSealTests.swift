// Sealed links against a real redis-server: a payload published by a link holding the cluster's key reaches a
// subscriber holding it intact; a message without a tag, with a tag under another key, or a genuine one moved to
// another channel is counted and dropped before any handler sees it. The MAC here is a stand-in (the composition
// hands in HMAC-SHA-256): what is tested is the link's handling, not the MAC.
import CairnTestSupport
import Foundation
import Testing

@testable import CairnCluster

/// A keyed stand-in MAC of `MessageSeal.tagLength` bytes (not for production: the link's behaviour is tested).
func testSeal(key: UInt8) -> MessageSeal {
    MessageSeal { input in
        var state = [UInt8](repeating: key, count: MessageSeal.tagLength)
        for (i, byte) in input.enumerated() {
            let slot = i % state.count
            state[slot] = state[slot] &* 31 &+ byte ^ key
        }
        return state
    }
}

@Suite(
    .serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed"), .timeLimit(.minutes(5)))
struct MessageSealTests {
    @Test func aSealOpensOnlyItsOwnPayloadOnItsOwnChannel() {
        let seal = testSeal(key: 7)
        let sealed = seal.sealed([1, 2, 3], channel: "t:c")
        #expect(sealed.count == 3 + MessageSeal.tagLength)
        #expect(seal.opened(sealed, channel: "t:c") == [1, 2, 3])
        #expect(seal.opened(sealed, channel: "t:d") == nil)
        #expect(testSeal(key: 8).opened(sealed, channel: "t:c") == nil)
        var altered = sealed
        altered[0] ^= 1
        #expect(seal.opened(altered, channel: "t:c") == nil)
        #expect(seal.opened([1, 2, 3], channel: "t:c") == nil)
        #expect(seal.sealed([], channel: "t:c").count == MessageSeal.tagLength)
    }

    @Test func aSealedLinkHearsOnlyWhatANodeWithItsKeySent() throws {
        let redis = try RedisServerProcess()
        let loop = TestLoop()
        func link(_ seal: MessageSeal?) throws -> RedisLink {
            RedisLink(
                endpoint: try RedisEndpoint(url: redis.url), loop: loop.loop, confinement: loop.confinement,
                seal: seal)
        }
        let sender = try link(testSeal(key: 7))
        let receiver = try link(testSeal(key: 7))
        let raw = try link(nil)  // whoever can reach Redis
        let stranger = try link(testSeal(key: 9))  // a node of another cluster, or a guessed key
        defer {
            for each in [sender, receiver, raw, stranger] { each.stop() }
        }
        var heard: [[UInt8]] = []
        var refused: [String] = []
        receiver.refused = { refused.append($0) }
        receiver.subscribe("t:c") { heard.append($0) }
        receiver.subscribe("t:d") { heard.append($0) }
        for each in [sender, receiver, raw, stranger] { each.start() }
        #expect(loop.spin { sender.isUp && receiver.isUp && raw.isUp && stranger.isUp })
        // Publish until the subscriptions are in place (SUBSCRIBE and PUBLISH travel on different connections).
        #expect(
            loop.spin {
                if heard.isEmpty { sender.publish("t:c", [1, 2, 3]) }
                return !heard.isEmpty
            })
        #expect(heard.first == [1, 2, 3], "the payload arrives without its tag")
        sender.publish("t:c", [0])  // after every repeat above (one connection's messages arrive in order)
        #expect(loop.spin { heard.last == [0] })
        #expect(receiver.refusedCount == 0)
        let count = heard.count

        raw.publish("t:c", [1, 2, 3])  // no tag
        raw.publish("t:c", [1, 2, 3] + [UInt8](repeating: 0, count: MessageSeal.tagLength))  // a made-up tag
        stranger.publish("t:c", [1, 2, 3])  // a tag under another key
        raw.publish("t:d", testSeal(key: 7).sealed([4, 5], channel: "t:c"))  // a genuine message, moved
        #expect(loop.spin { receiver.refusedCount == 4 })
        sender.publish("t:d", [6])
        #expect(loop.spin { heard.count == count + 1 })
        #expect(heard.dropFirst(count).elementsEqual([[6]]), "nothing refused reached a handler")
        #expect(refused == ["t:c", "t:c", "t:c", "t:d"])
    }
}
