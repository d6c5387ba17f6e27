// The link against a real redis-server on loopback: commands and typed errors, pub/sub, and what happens when
// Redis is killed and started again: the link reports down, commands fail at once with `.unavailable`, it
// reconnects by itself with back-off, counts the reconnect and subscribes again.
import CairnTestSupport
import Foundation
import Testing

@testable import CairnCluster

@Suite(
    .serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed"), .timeLimit(.minutes(5)))
struct RedisLinkTests {
    private func makeLink(_ redis: RedisServerProcess, _ loop: TestLoop) throws -> RedisLink {
        RedisLink(
            endpoint: try RedisEndpoint(url: redis.url), loop: loop.loop, confinement: loop.confinement,
            backoff: ReconnectBackoff(base: 0.05, cap: 0.4))
    }

    @Test func commandsRoundTripAndErrorsAreTyped() throws {
        let redis = try RedisServerProcess()
        let loop = TestLoop()
        let link = try makeLink(redis, loop)
        defer { link.stop() }
        link.start()
        #expect(loop.spin { link.isUp })

        var replies: [Result<RedisValue, RedisError>] = []
        link.command(["SET", "k", "v a l"]) { replies.append($0) }
        link.command(["GET", "k"]) { replies.append($0) }
        link.command(["INCR", "k"]) { replies.append($0) }  // not an integer: an error reply
        link.command(["ZADD", "z", "2", "b", "1", "a"]) { replies.append($0) }
        link.command(["ZRANGEBYSCORE", "z", "-inf", "+inf"]) { replies.append($0) }
        link.command(["GET", "missing"]) { replies.append($0) }
        #expect(loop.spin { replies.count == 6 })
        #expect(replies[0] == .success(.bytes(Array("OK".utf8))))
        #expect(replies[1] == .success(.bytes(Array("v a l".utf8))))
        guard case .failure(.server(let message)) = replies[2] else {
            Issue.record("expected a server error, got \(replies[2])")
            return
        }
        #expect(message.contains("not an integer"))
        #expect(replies[3] == .success(.integer(2)))
        #expect(replies[4] == .success(.array([.bytes(Array("a".utf8)), .bytes(Array("b".utf8))])))
        #expect(replies[5] == .success(.null))
        #expect(link.reconnects == 0)
    }

    @Test func publishedMessagesReachSubscribers() throws {
        let redis = try RedisServerProcess()
        let loop = TestLoop()
        let link = try makeLink(redis, loop)
        defer { link.stop() }
        var received: [String] = []
        link.subscribe("cairn:test") { received.append(String(decoding: $0, as: UTF8.self)) }
        link.start()
        #expect(loop.spin { link.isUp })
        // SUBSCRIBE goes out on the pub/sub connection when it comes up; wait until Redis counts the subscriber.
        var subscribers: Int64 = 0
        #expect(
            loop.spin {
                link.command(["PUBSUB", "NUMSUB", "cairn:test"]) { reply in
                    if case .success(.array(let parts)) = reply, parts.count == 2, case .integer(let n) = parts[1] {
                        subscribers = n
                    }
                }
                loop.run(for: 0.02)
                return subscribers == 1
            })
        link.publish("cairn:test", Array("hello".utf8))
        link.publish("cairn:other", Array("not for us".utf8))
        link.publish("cairn:test", Array("world".utf8))
        #expect(loop.spin { received.count == 2 })
        #expect(received == ["hello", "world"])
        link.unsubscribe("cairn:test")
        link.publish("cairn:test", Array("after".utf8))
        loop.run(for: 0.2)
        #expect(received == ["hello", "world"])
    }

    @Test func commandsFailAtOnceWhileRedisIsAway() throws {
        let redis = try RedisServerProcess()
        redis.kill()
        let loop = TestLoop()
        let link = try makeLink(redis, loop)
        defer { link.stop() }
        link.start()
        loop.run(for: 0.3)
        #expect(!link.isUp)
        #expect(link.lastError != nil)
        var reply: Result<RedisValue, RedisError>?
        link.command(["PING"]) { reply = $0 }
        #expect(reply == .failure(.unavailable))
        // Redis appears later: the back-off's next attempt finds it.
        try redis.restart()
        #expect(loop.spin { link.isUp })
        #expect(link.reconnects == 0)  // the first connection is not a reconnect
    }

    @Test func killAndRestartReconnectsAndResubscribes() throws {
        let redis = try RedisServerProcess()
        let loop = TestLoop()
        let link = try makeLink(redis, loop)
        defer { link.stop() }
        var states: [Bool] = []
        link.observeState { states.append($0) }
        var received: [String] = []
        link.subscribe("cairn:presence") { received.append(String(decoding: $0, as: UTF8.self)) }
        link.start()
        #expect(loop.spin { link.isUp })

        var inFlight: Result<RedisValue, RedisError>?
        redis.kill()
        link.command(["BLPOP", "never", "0"]) { inFlight = $0 }  // sent, or refused if the loss is already seen
        #expect(loop.spin { !link.isUp })
        #expect(loop.spin { inFlight != nil })
        #expect(inFlight == .failure(.disconnected) || inFlight == .failure(.unavailable))
        var whileDown: Result<RedisValue, RedisError>?
        link.command(["PING"]) { whileDown = $0 }
        #expect(whileDown == .failure(.unavailable))

        try redis.restart()
        #expect(loop.spin { link.isUp })
        #expect(link.reconnects == 1)
        #expect(states == [true, false, true])
        // The subscription was renewed on the new connection: a publish reaches it.
        #expect(
            loop.spin {
                link.publish("cairn:presence", Array("+1/a".utf8))
                loop.run(for: 0.05)
                return !received.isEmpty
            })
        #expect(received.first == "+1/a")
    }

    @Test func aConfirmedSubscriptionHearsTheNextPublishAndIsConfirmedAgainAfterARestart() throws {
        let redis = try RedisServerProcess()
        let loop = TestLoop()
        let link = try makeLink(redis, loop)
        defer { link.stop() }
        var confirmed = 0
        var received: [String] = []
        link.subscribe(
            "cairn:ctl", { received.append(String(decoding: $0, as: UTF8.self)) }, subscribed: { confirmed += 1 })
        link.subscribe("cairn:quiet") { _ in }  // no confirmation asked for: none counted above
        link.start()
        #expect(loop.spin { confirmed == 1 })
        // Once confirmed, one publish is enough: no polling of PUBSUB NUMSUB as the test above must do.
        link.publish("cairn:ctl", Array("first".utf8))
        #expect(loop.spin { received == ["first"] })

        redis.kill()
        #expect(loop.spin { !link.isUp })
        try redis.restart()
        #expect(loop.spin { confirmed == 2 })
        #expect(loop.spin { link.isUp })  // the commands connection (which publishes) may come back later
        link.publish("cairn:ctl", Array("second".utf8))
        #expect(loop.spin { received == ["first", "second"] })

        // Unsubscribed: a later confirmation (none comes) could not be counted, and nothing more arrives.
        link.unsubscribe("cairn:ctl")
        link.publish("cairn:ctl", Array("after".utf8))
        loop.run(for: 0.2)
        #expect(confirmed == 2)
        #expect(received == ["first", "second"])
    }

    @Test func anActionAfterSubscriptionsRunsOnceRedisConfirmedThemAndWhatItPublishesThenArrives() throws {
        let redis = try RedisServerProcess()
        let loop = TestLoop()
        let link = try makeLink(redis, loop)
        defer { link.stop() }
        link.start()
        #expect(loop.spin { link.isUp })
        var ran: [Bool] = []
        link.afterSubscriptions { ran.append($0) }
        #expect(ran == [true], "nothing subscribed yet: at once")
        var order: [String] = []
        var received: [String] = []
        for round in 0..<20 {
            let channel = "t:u:\(round)"
            link.subscribe(channel) { _ in received.append(channel) }
            link.subscribe("t:gone:\(round)") { _ in }
            link.unsubscribe("t:gone:\(round)")  // asked, then dropped: Redis confirms it anyway, nothing blocks
            link.afterSubscriptions { confirmed in
                ran.append(confirmed)
                order.append(channel)
                link.publish(channel, [1])  // on the commands connection, at once: the subscription is in place
            }
        }
        #expect(link.heldUntilSubscribed == 20 && ran == [true], "held until Redis confirms")
        #expect(loop.spin { ran.count == 21 })
        #expect(ran.allSatisfy { $0 } && order == (0..<20).map { "t:u:\($0)" } && link.heldUntilSubscribed == 0)
        #expect(loop.spin { received.count == 20 })
        #expect(Set(received) == Set(order), "every publish made once confirmed arrived")

        // Subscribed, dropped and taken again in one turn (a viewer leaving and coming back): both SUBSCRIBEs are
        // confirmed, and the channel delivers.
        received.removeAll()
        link.subscribe("t:again") { _ in received.append("t:again") }
        link.unsubscribe("t:again")
        link.subscribe("t:again") { _ in received.append("t:again") }
        link.afterSubscriptions { _ in link.publish("t:again", [3]) }
        #expect(loop.spin { received == ["t:again"] })

        // Held when the connection goes: released at once, told the subscriptions are not there.
        link.subscribe("t:held") { _ in }
        var last: Bool?
        link.afterSubscriptions { last = $0 }
        #expect(link.heldUntilSubscribed == 1)
        redis.kill()  // the SUBSCRIBE is still in the link's buffer: never confirmed
        #expect(loop.spin { last != nil })
        #expect(last == false && link.heldUntilSubscribed == 0)
        last = nil
        link.afterSubscriptions { last = $0 }  // nothing held while down
        #expect(last == false)

        // After the reconnect, an action waits for the SUBSCRIBE that restores every channel.
        try redis.restart()
        #expect(loop.spin { link.isUp })
        received.removeAll()
        link.afterSubscriptions { confirmed in
            last = confirmed
            link.publish("t:u:0", [2])
        }
        #expect(loop.spin { received == ["t:u:0"] })
        #expect(last == true)
    }

    @Test func aServerThatStopsAnsweringIsDroppedAndFoundAgain() throws {
        let redis = try RedisServerProcess()
        let loop = TestLoop()
        let link = RedisLink(
            endpoint: try RedisEndpoint(url: redis.url), loop: loop.loop, confinement: loop.confinement,
            backoff: ReconnectBackoff(base: 0.05, cap: 0.2), heartbeatSeconds: 0.1)
        defer { link.stop() }
        var states: [Bool] = []
        link.observeState { states.append($0) }
        link.start()
        #expect(loop.spin { link.isUp })
        redis.pause()  // a half-open path: TCP stays up, nothing answers
        var pending: Result<RedisValue, RedisError>?
        link.command(["PING"]) { pending = $0 }
        #expect(loop.spin { !link.isUp })
        #expect(link.lastError?.contains("no answer to PING") == true)
        #expect(pending == .failure(.disconnected))
        loop.run(for: 0.5)  // reconnecting to a frozen server: TCP connects, nothing answers, so it is not up
        #expect(!link.isUp)
        #expect(link.reconnects == 0)
        redis.resume()
        #expect(loop.spin { link.isUp })
        #expect(link.reconnects == 1)
        var reply: Result<RedisValue, RedisError>?
        link.command(["PING"]) { reply = $0 }
        #expect(loop.spin { reply != nil })
        #expect(reply == .success(.bytes(Array("PONG".utf8))))
        #expect(states == [true, false, true])
    }

    @Test func aPubSubConnectionThatHearsNothingIsDroppedAndSubscribedAgain() throws {
        let redis = try RedisServerProcess()
        let loop = TestLoop()
        let link = RedisLink(
            endpoint: try RedisEndpoint(url: redis.url), loop: loop.loop, confinement: loop.confinement,
            backoff: ReconnectBackoff(base: 0.05, cap: 0.2), heartbeatSeconds: 0.1)
        defer { link.stop() }
        var received: [String] = []
        var confirmed = 0
        link.subscribe(
            "cairn:ctl", { received.append(String(decoding: $0, as: UTF8.self)) }, subscribed: { confirmed += 1 })
        link.start()
        #expect(loop.spin { link.isUp && confirmed == 1 })
        loop.run(for: 0.5)  // heartbeats echo back: nothing is dropped
        #expect(link.reconnects == 0)
        // The pub/sub connection stays up but hears nothing more (as one silently cut would): PINGs on the commands
        // connection are still answered, the echo is not.
        var reason: String?
        link.observeState { up in if !up { reason = link.lastError } }
        link.silenceEchoForTesting()
        #expect(loop.spin { reason != nil })
        #expect(reason?.contains("heard none of its last") == true)
        #expect(loop.spin { link.reconnects == 1 && link.isUp })
        #expect(loop.spin { confirmed == 2 })
        link.publish("cairn:ctl", Array("after".utf8))
        #expect(loop.spin { received == ["after"] })
    }
}
