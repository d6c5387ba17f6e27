// A host that reaches the nodes' Redis but holds no cluster key: two real `cairn serve` processes on one real
// PostgreSQL database and one real redis-server, bob connected to node b. A chat message forged on b's inbox (without
// a tag, or with a made-up one) reaches no socket, and a forged control message ending bob's sessions closes
// nothing; every forgery is counted as dropped. Genuine news (alice's chat message through node a) still arrives.
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite(
        .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed"),
        .enabled(if: PostgresServerProcess.isAvailable, "PostgreSQL is not installed"))
    struct ClusterSealTests {
        /// A well-formed news message (`FanOutMessage` kind 5, one section of tag 0) for `user` with `payload`.
        static func news(for user: Int, payload: [UInt8]) -> [UInt8] {
            var out: [UInt8] = [1, 5] + integer(0, 8) + [1, 0] + integer(1, 4) + integer(Int64(user), 8)
            out += integer(Int64(payload.count), 4) + payload
            return out
        }

        /// A well-formed control message of `kind` about `subject` with `code`, from node `node`.
        static func control(kind: UInt8, subject: Int, code: UInt8, node: String) -> [UInt8] {
            var out: [UInt8] = [1, kind] + integer(Int64(subject), 8) + integer(0, 24) + [code, 0] + integer(0, 16)
            out += [UInt8(node.utf8.count)] + Array(node.utf8)
            return out
        }

        /// `value` little-endian on `bytes` bytes (zeros past the eighth).
        static func integer(_ value: Int64, _ bytes: Int) -> [UInt8] {
            (0..<bytes).map { $0 < 8 ? UInt8(truncatingIfNeeded: UInt64(bitPattern: value) >> UInt64($0 * 8)) : 0 }
        }

        /// Node's cross-node messages dropped so far.
        static func dropped(_ port: Int) throws -> Double {
            let metrics = try PrometheusText(try HTTPClient.get(port: port, path: "/metrics").text)
            return metrics.value("cairn_cluster_messages_dropped_total") ?? 0
        }

        @Test func messagesForgedOnRedisReachNoSocketAndChangeNothing() throws {
            let nodes = try ClusterNewsTests.twoNodes()
            let (a, b) = (nodes.a, nodes.b)
            let (alice, aliceID) = try registerMember(port: a.port, "alice")
            let (bob, bobID) = try registerMember(port: a.port, "bob")
            try ClusterNewsTests.befriend((alice, aliceID), (bob, bobID))
            bob.close()
            let bobOnB = try b.login("bob")
            #expect(ClusterPresenceTests.eventually { ControlChannelTests.seesOnline(alice, bobID) })
            let droppedBefore = try Self.dropped(b.port)

            let chat =
                #"{"ev":"chat.msg","message":{"id":999,"from":\#(aliceID),"to":\#(bobID),"text":"meet me outside","#
                + #""at":1700000000000}}"#
            let news = Self.news(for: bobID, payload: Array(chat.utf8))
            let endSessions = Self.control(kind: 6, subject: bobID, code: 1, node: "a")
            let madeUp = [UInt8](repeating: 7, count: 32)
            for forged in [news, news + madeUp] {
                #expect(try nodes.redis.publish("ctl:news:b", forged) == 1, "node b's inbox heard it")
            }
            for forged in [endSessions, endSessions + madeUp] {
                #expect(try nodes.redis.publish("ctl:ctl", forged) == 2, "both nodes heard it")
            }
            #expect(try ClusterPresenceTests.eventually { try Self.dropped(b.port) >= droppedBefore + 4 })
            #expect(try bobOnB.pollObject(within: 1) == nil, "nothing forged reached bob")
            let me = try bobOnB.requestOK("whoami")
            #expect((me["user"] as? [String: Any])?["username"] as? String == "bob", "his session is still open")

            _ = try alice.requestOK("chat.send", ["to": bobID, "text": "on my way"])
            let heard = try bobOnB.nextEvent("chat.msg", timeout: 5)
            let message = try #require(heard["message"] as? [String: Any])
            #expect(message["text"] as? String == "on my way" && message["from"] as? Int == aliceID)
        }
    }
}
