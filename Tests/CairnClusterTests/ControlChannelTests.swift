// The control channel's message and channel: a `ControlMessage` survives the round trip and anything truncated,
// padded, of another version or with bad flags is refused; the channel subscribes `<prefix>:ctl` and its own ack
// channel, skips its own messages, counts and drops malformed ones, acknowledges on the sender's channel, and ends a
// wait when every awaited node answered, or after the deadline once the silent nodes are no longer listed.
import Testing

@testable import CairnCluster

@Suite(.timeLimit(.minutes(5))) struct ControlChannelTests {
    static let sample = ControlMessage(
        kind: 4, subject: 7, other: -9, changeVersion: 1_700_000_000_123, otherVersion: 42, code: 3,
        time: 1_700_000_060_000, ackID: 77, node: "hub-a")

    @Test func roundTripsEveryField() {
        let bytes = Self.sample.encoded()
        #expect(bytes.count == ControlMessage.fixedSize + 5)
        #expect(ControlMessage(decoding: bytes) == Self.sample)
        var timeless = Self.sample
        timeless.time = nil
        timeless.node = ""
        #expect(ControlMessage(decoding: timeless.encoded()) == timeless)
    }

    @Test func refusesWhatIsNotExactlyOneVersionOneMessage() {
        let bytes = Self.sample.encoded()
        for cut in 0..<bytes.count { #expect(ControlMessage(decoding: Array(bytes.prefix(cut))) == nil) }
        #expect(ControlMessage(decoding: bytes + [0]) == nil)
        var other = bytes
        other[0] = 2
        #expect(ControlMessage(decoding: other) == nil)
        var flags = bytes
        flags[35] = 2
        #expect(ControlMessage(decoding: flags) == nil)
        var name = bytes
        name[ControlMessage.fixedSize] = 0xFF  // not UTF-8
        #expect(ControlMessage(decoding: name) == nil)
    }

    static func channel(_ link: FakePubSubLink, node: String = "a", now: @escaping () -> Int64 = { 0 })
        -> ControlChannel
    {
        let channel = ControlChannel(
            link: link, prefix: "it", node: node, deadlineMs: 2000, giveUpMs: 30_000, now: now)
        channel.start(loop: nil)
        Self.confirm(link)
        return channel
    }

    /// Plays Redis confirming every subscription the channel asked to hear about.
    static func confirm(_ link: FakePubSubLink) {
        for channel in link.confirmations.keys.sorted() { link.confirmations[channel]?() }
    }

    @Test func hearsOtherNodesSkipsItsOwnAndDropsMalformed() {
        let link = FakePubSubLink()
        let channel = Self.channel(link)
        #expect(link.log == ["+it:ctl", "+it:ack:a"])
        var heard: [ControlMessage] = []
        channel.received = { heard.append($0) }
        var mine = Self.sample
        mine.node = "a"
        link.handlers["it:ctl"]?(mine.encoded())
        link.handlers["it:ctl"]?(Self.sample.encoded())
        link.handlers["it:ctl"]?([1, 2, 3])
        #expect(heard == [Self.sample])
        #expect(channel.receivedCount == 1 && channel.droppedCount == 1)
        channel.publish(Self.sample)
        let sent = link.published.last.flatMap { ControlMessage(decoding: $0.payload) }
        #expect(link.published.last?.channel == "it:ctl" && sent?.node == "a" && sent?.ackID == 0)
    }

    @Test func publishNowSendsOnlyWhileReadyAndKeepsNothing() {
        let link = FakePubSubLink()
        let channel = Self.channel(link)
        #expect(channel.publishNow(Self.sample))
        let sent = link.published.last.flatMap { ControlMessage(decoding: $0.payload) }
        #expect(link.published.count == 1 && sent?.node == "a" && sent?.ackID == 0)
        link.up = false
        channel.linkLost()
        #expect(!channel.publishNow(Self.sample))
        link.up = true
        Self.confirm(link)
        channel.flush()
        #expect(link.published.count == 1, "what could not go out is not sent later")
    }

    @Test func aWaitEndsWhenEveryAwaitedNodeAcknowledged() {
        let a = FakePubSubLink()
        let b = FakePubSubLink()
        let c = FakePubSubLink()
        let sender = Self.channel(a)
        let nodeB = Self.channel(b, node: "b")
        let nodeC = Self.channel(c, node: "c")
        var done = 0
        sender.publish(Self.sample, awaiting: { ["b", "c", "a"] }, listed: { _ in true }) { done += $0 ? 1 : 100 }
        let message = try! #require(a.published.last)
        #expect(message.channel == "it:ctl" && sender.waitingCount == 1)
        // b and c hear it and acknowledge on a's channel.
        var applied: [String] = []
        nodeB.received = {
            applied.append("b")
            nodeB.acknowledge($0)
        }
        nodeC.received = {
            applied.append("c")
            nodeC.acknowledge($0)
        }
        b.handlers["it:ctl"]?(message.payload)
        #expect(b.published.last?.channel == "it:ack:a")
        sender.heardAck(b.published.last!.payload)
        sender.heardAck(b.published.last!.payload)  // twice: counted once towards the wait
        #expect(done == 0)
        c.handlers["it:ctl"]?(message.payload)
        sender.heardAck(c.published.last!.payload)
        #expect(done == 1 && applied == ["b", "c"] && sender.waitingCount == 0)
        sender.heardAck([1, 0])
        #expect(sender.droppedCount == 1)
        // Nobody to wait for: answered at once, and no ack asked for.
        sender.publish(Self.sample, awaiting: { [] }, listed: { _ in true }) { done += $0 ? 1 : 100 }
        #expect(done == 2 && ControlMessage(decoding: a.published.last!.payload)?.ackID == 0)
    }

    @Test func aSilentNodeIsWaitedForUntilItLeavesPresence() {
        let link = FakePubSubLink()
        var now: Int64 = 0
        let sender = Self.channel(link, now: { now })
        var listed: Set<String> = ["b"]
        var done = 0
        sender.publish(Self.sample, awaiting: { ["b"] }, listed: { listed.contains($0) }) { done += $0 ? 1 : 100 }
        now = 1999
        listed = []
        sender.checkDeadlines()
        #expect(done == 0)  // before the deadline even an absent node is waited for
        now = 2000
        listed = ["b"]
        sender.checkDeadlines()
        #expect(done == 0)  // still listed: it may be publishing
        listed = []
        now = 2100
        sender.checkDeadlines()
        #expect(done == 1 && sender.lapsedCount == 1 && sender.waitingCount == 0)
        var stopped: Bool?
        sender.publish(Self.sample, awaiting: { ["b"] }, listed: { _ in true }) { stopped = $0 }
        sender.stop()
        #expect(stopped == false, "a node stopping answers its open waits as not confirmed")
    }

    @Test func aWaitSurvivesALinkDropAndIsSentOnceTheLinkIsUpAndBothChannelsAreSubscribedAgain() {
        let link = FakePubSubLink()
        var now: Int64 = 0
        let sender = Self.channel(link, now: { now })
        var resubscribed = 0
        sender.resubscribed = { resubscribed += 1 }
        var known = false  // the mirror is emptied while the link is down
        sender.presenceKnown = { known }
        link.up = false
        sender.linkLost()
        var answer: Bool?
        var awaited: Set<String> = []
        sender.publish(Self.sample, awaiting: { awaited }, listed: { _ in false }) { answer = $0 }
        #expect(answer == nil, "nobody listed while presence is unknown is not nobody to wait for")
        #expect(link.published.isEmpty)
        now = 5000
        sender.checkDeadlines()
        #expect(answer == nil && sender.lapsedCount == 0, "nothing lapses while the link is down")
        // The pub/sub connection comes back first: both channels confirmed, the commands connection still down.
        Self.confirm(link)
        #expect(resubscribed == 1)
        #expect(link.published.isEmpty, "nothing can be sent before the link is up")
        // The link is up, presence not rebuilt yet: the wait is sent but cannot end, empty as its set is.
        link.up = true
        sender.flush()
        #expect(link.published.count == 1 && answer == nil)
        sender.checkDeadlines()
        #expect(answer == nil, "an empty mirror is never taken for everyone gone")
        // Presence is rebuilt and lists b: the wait takes it in and waits for its acknowledgement.
        known = true
        awaited = ["b"]
        sender.flush()
        #expect(answer == nil)
        let sent = try! #require(link.published.last.flatMap { ControlMessage(decoding: $0.payload) })
        #expect(sent.ackID != 0 && sent.node == "a")
        let b = FakePubSubLink()
        let nodeB = Self.channel(b, node: "b")
        nodeB.received = { nodeB.acknowledge($0) }
        b.handlers["it:ctl"]?(sent.encoded())
        sender.heardAck(b.published.last!.payload)
        #expect(answer == true && sender.waitingCount == 0)
    }

    @Test func afterAResubscriptionOpenWaitsAreSentAgainAndAFailedPublishIsRetried() {
        let link = FakePubSubLink()
        let sender = Self.channel(link)
        var answer: Bool?
        sender.publish(Self.sample, awaiting: { ["b"] }, listed: { _ in true }) { answer = $0 }
        #expect(link.published.count == 1)
        // The link drops and returns: acknowledgements sent meanwhile are lost for this node, so it asks again.
        sender.linkLost()
        Self.confirm(link)
        #expect(link.published.count == 2 && sender.resentCount == 1)
        let first = ControlMessage(decoding: link.published[0].payload)
        let second = ControlMessage(decoding: link.published[1].payload)
        #expect(first?.ackID == second?.ackID, "the same id: an ack for either ends the wait")
        // Messages that wait for nobody are kept while the PUBLISH fails and sent once it works.
        link.up = false
        sender.publish(Self.sample)
        #expect(sender.outboxCount == 1)
        link.up = true
        sender.flush()
        #expect(sender.outboxCount == 0 && link.published.count == 3)
        #expect(answer == nil)
    }

    @Test func aWaitNobodyAnswersIsGivenUpAnsweredFalseAndItsMessageStillGoesOut() {
        let link = FakePubSubLink()
        var now: Int64 = 0
        let sender = Self.channel(link, now: { now })
        link.up = false  // its first send never went out
        sender.linkLost()
        var answer: Bool?
        sender.publish(Self.sample, awaiting: { ["b"] }, listed: { _ in true }) { answer = $0 }
        now = 29_999
        sender.checkDeadlines()
        #expect(answer == nil)
        now = 30_000
        sender.checkDeadlines()
        #expect(answer == false && sender.givenUpCount == 1 && sender.waitingCount == 0)
        // The change is committed: once the link is back it is published all the same, waiting for nobody.
        #expect(sender.outboxCount == 1)
        link.up = true
        Self.confirm(link)
        let sent = link.published.last.flatMap { ControlMessage(decoding: $0.payload) }
        #expect(sent?.kind == Self.sample.kind && sent?.ackID == 0 && sender.outboxCount == 0)
    }

    @Test func pastTheDeadlineAWaitIsSentAgainEverySecondToANodeThatMissedIt() {
        let link = FakePubSubLink()
        var now: Int64 = 0
        let sender = Self.channel(link, now: { now })
        var answer: Bool?
        sender.publish(Self.sample, awaiting: { ["b"] }, listed: { _ in true }) { answer = $0 }
        #expect(link.published.count == 1)
        now = 1_500
        sender.checkDeadlines()
        #expect(link.published.count == 1, "before the deadline: no repeat")
        now = 2_000
        sender.checkDeadlines()
        #expect(link.published.count == 2 && sender.resentCount == 1)
        now = 2_500
        sender.checkDeadlines()
        #expect(link.published.count == 2, "at most once a second")
        // b missed the first (its own link blinked) and answers the repeat.
        let b = FakePubSubLink()
        let nodeB = Self.channel(b, node: "b")
        nodeB.received = { nodeB.acknowledge($0) }
        b.handlers["it:ctl"]?(link.published.last!.payload)
        sender.heardAck(b.published.last!.payload)
        #expect(answer == true)
    }

    @Test func aPublishThatFailsWhileTheLinkIsUpIsRetriedOnceASecond() {
        let link = FakePubSubLink()
        var now: Int64 = 0
        let sender = Self.channel(link, now: { now })
        link.failPublishes = true
        sender.publish(Self.sample)
        #expect(sender.outboxCount == 1 && link.published.isEmpty)
        now = 100
        sender.checkDeadlines()  // the first retry
        #expect(sender.outboxCount == 1)
        now = 200
        sender.checkDeadlines()
        #expect(sender.outboxCount == 1)
        link.failPublishes = false
        now = 600
        sender.checkDeadlines()
        #expect(link.published.isEmpty, "not retried more than once a second")
        now = 1_100
        sender.checkDeadlines()
        #expect(link.published.count == 1 && sender.outboxCount == 0)
    }
}
