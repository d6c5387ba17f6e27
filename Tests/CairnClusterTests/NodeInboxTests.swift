// A node's inbox: started, it subscribes `<prefix>:news:<node>` once; a publish to another node goes out on that
// node's inbox as one encoded message, and one to its own name goes nowhere; what arrives is decoded and handed on,
// a malformed message counted and dropped; a refused publish is counted. A fake link stands in for Redis.
import Testing

@testable import CairnCluster

@Suite(.timeLimit(.minutes(5))) struct NodeInboxTests {
    static let message = FanOutMessage(
        kind: 5, subject: 0, sections: [.init(tag: 1, recipients: [2, 3], payload: Array("{}".utf8))])

    @Test func publishesToOtherNodesInboxesAndHearsItsOwn() throws {
        let link = FakePubSubLink()
        let inbox = NodeInbox(link: link, prefix: "nx", node: "a")
        var confirmed = 0
        inbox.subscribed = { confirmed += 1 }
        inbox.start()
        #expect(link.log == ["+nx:news:a"])
        link.confirmations["nx:news:a"]?()
        link.confirmations["nx:news:a"]?()  // again after a reconnect
        #expect(confirmed == 2)
        var heard: [FanOutMessage] = []
        inbox.received = { heard.append($0) }

        inbox.publish(Self.message, to: "b")
        inbox.publish(Self.message, to: "a")  // never to itself
        #expect(link.published.map(\.channel) == ["nx:news:b"])
        #expect(link.published.first?.payload == Self.message.encoded())
        #expect(inbox.publishedCount == 1)

        let handler = try #require(link.handlers["nx:news:a"])
        handler(Self.message.encoded())
        handler(Array(Self.message.encoded().dropLast()))
        #expect(heard == [Self.message])
        #expect(inbox.receivedCount == 1 && inbox.droppedCount == 1)

        link.up = false
        inbox.publish(Self.message, to: "c")
        #expect(inbox.failedCount == 1)
        inbox.stop()
        #expect(link.log == ["+nx:news:a", "-nx:news:a"])
    }
}
