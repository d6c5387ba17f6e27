// Per-subject channels: the first retain subscribes `<prefix>:u:<id>` (items: `<prefix>:i:<id>`), later ones only
// count, the last release unsubscribes (a stray release changes nothing); a publish goes out on the subject's channel
// as one encoded message; what arrives is decoded and handed on, while malformed or misaddressed messages are counted
// and dropped, and messages for a subject no longer retained are ignored. A fake link stands in for Redis; one test
// runs two nodes' channels over a real redis-server.
import CairnTestSupport
import Foundation
import Testing

@testable import CairnCluster

/// Records what the channels asked of the link and lets the test deliver messages.
final class FakePubSubLink: PubSubLink {
    var log: [String] = []
    var handlers: [String: ([UInt8]) -> Void] = [:]
    /// The confirmation callbacks asked for, by channel: a test calls one to play Redis confirming.
    var confirmations: [String: () -> Void] = [:]
    var published: [(channel: String, payload: [UInt8])] = []
    var up = true
    var isUp: Bool { up }
    /// While set, a PUBLISH fails although the link is up (an error reply, a connection lost in flight).
    var failPublishes = false

    func subscribe(_ channel: String, _ handler: @escaping ([UInt8]) -> Void, subscribed: (() -> Void)?) {
        log.append("+" + channel)
        handlers[channel] = handler
        confirmations[channel] = subscribed
    }

    func unsubscribe(_ channel: String) {
        log.append("-" + channel)
        handlers[channel] = nil
        confirmations[channel] = nil
    }

    func publish(_ channel: String, _ payload: [UInt8], _ done: ((Result<RedisValue, RedisError>) -> Void)?) {
        guard up else {
            done?(.failure(.unavailable))
            return
        }
        guard !failPublishes else {
            done?(.failure(.disconnected))
            return
        }
        published.append((channel, payload))
        done?(.success(.integer(1)))
    }
}

@Suite(.timeLimit(.minutes(5))) struct SubjectChannelsTests {
    @Test func itemsHaveChannelsOfTheirOwn() {
        let link = FakePubSubLink()
        let items = SubjectChannels(link: link, prefix: "it", letter: "i")
        #expect(items.channel(7) == "it:i:7")
        items.retain(7)
        var heard: [FanOutMessage] = []
        items.received = { heard.append($0) }
        let message = FanOutMessage(kind: 4, subject: 7, sections: [.init(tag: 0, recipients: [2], payload: [1])])
        items.publish(message)
        #expect(link.log == ["+it:i:7"])
        #expect(link.published.map(\.channel) == ["it:i:7"])
        link.handlers["it:i:7"]?(message.encoded())
        #expect(heard == [message])
        items.release(7)
        #expect(link.log == ["+it:i:7", "-it:i:7"])
    }

    @Test func subscribesOnTheFirstRetainAndUnsubscribesOnTheLastRelease() {
        let link = FakePubSubLink()
        let channels = SubjectChannels(link: link, prefix: "it")
        channels.retain(7)
        channels.retain(7)
        channels.retain(8)
        #expect(link.log == ["+it:u:7", "+it:u:8"])
        #expect(channels.references(of: 7) == 2 && channels.subscribedCount == 2)
        channels.release(7)
        #expect(link.log.count == 2)
        channels.release(7)
        #expect(link.log.last == "-it:u:7")
        channels.release(7)  // stray: nothing more
        channels.release(9)
        #expect(link.log == ["+it:u:7", "+it:u:8", "-it:u:7"])
        #expect(channels.subscribedCount == 1 && channels.references(of: 7) == 0)
        channels.retain(7)  // and again from scratch
        #expect(link.log.last == "+it:u:7")
    }

    @Test func publishesOneEncodedMessageOnTheSubjectsChannel() {
        let link = FakePubSubLink()
        let channels = SubjectChannels(link: link, prefix: "it")
        let message = FanOutMessage(kind: 1, subject: 5, sections: [.init(tag: 0, recipients: [1, 2], payload: [7])])
        channels.publish(message)
        #expect(link.published.count == 1)
        #expect(link.published.first?.channel == "it:u:5")
        #expect(link.published.first.map { FanOutMessage(decoding: $0.payload) } == message)
        #expect(channels.publishedCount == 1 && channels.failedCount == 0)
        link.up = false
        channels.publish(message)
        #expect(channels.failedCount == 1)
    }

    @Test func receivesWellFormedMessagesAndCountsAndDropsTheRest() throws {
        let link = FakePubSubLink()
        let channels = SubjectChannels(link: link, prefix: "it")
        var heard: [FanOutMessage] = []
        channels.received = { heard.append($0) }
        channels.retain(5)
        let deliver = try #require(link.handlers["it:u:5"])
        let good = FanOutMessage(kind: 1, subject: 5, sections: [.init(tag: 0, recipients: [1], payload: [7])])
        deliver(good.encoded())
        deliver(Array(good.encoded().dropLast()))  // truncated
        deliver([0xFF, 0, 1])  // garbage
        deliver(FanOutMessage(kind: 1, subject: 6, sections: []).encoded())  // not this channel's subject
        #expect(heard == [good])
        #expect(channels.receivedCount == 1 && channels.droppedCount == 3)
        channels.release(5)
        deliver(good.encoded())  // in flight when unsubscribed
        #expect(heard.count == 1 && channels.droppedCount == 3)
    }
}

@Suite(
    .serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed"), .timeLimit(.minutes(5)))
struct SubjectChannelsRedisTests {
    @Test func aMessagePublishedOnOneNodeReachesASubscribedNodeOnly() throws {
        let redis = try RedisServerProcess()
        let loop = TestLoop()
        func link() throws -> RedisLink {
            RedisLink(endpoint: try RedisEndpoint(url: redis.url), loop: loop.loop, confinement: loop.confinement)
        }
        let linkA = try link()
        let linkB = try link()
        defer {
            linkA.stop()
            linkB.stop()
        }
        let a = SubjectChannels(link: linkA, prefix: "t")
        let b = SubjectChannels(link: linkB, prefix: "t")
        var heard: [FanOutMessage] = []
        b.received = { heard.append($0) }
        linkA.start()
        linkB.start()
        #expect(loop.spin { linkA.isUp && linkB.isUp })
        b.retain(3)
        let message = FanOutMessage(kind: 1, subject: 3, sections: [.init(tag: 0, recipients: [4], payload: [1, 2])])
        // Publish until the subscription is in place (SUBSCRIBE and PUBLISH travel on different connections).
        #expect(
            loop.spin {
                if heard.isEmpty { a.publish(message) }
                return !heard.isEmpty
            })
        #expect(heard.first == message && b.droppedCount == 0)
        linkA.publish("t:u:3", [9, 9, 9], nil)  // not a message: counted and dropped
        #expect(loop.spin { b.droppedCount == 1 })
        b.release(3)
        let received = b.receivedCount
        a.publish(message)
        a.publish(FanOutMessage(kind: 1, subject: 5, sections: []))  // nobody listens to 5
        _ = loop.spin(timeout: 0.3) { false }  // let anything on its way arrive
        #expect(b.receivedCount == received)
    }
}
