// The control channel: every node subscribes `<prefix>:ctl` at start and hears there each change another node
// committed to state every node keeps in memory (a `ControlMessage`); its own messages coming back are skipped.
// A change the sender must know applied everywhere before it answers (a hide) carries an ack id: each node that
// applies it answers on the sender's `<prefix>:ack:<node>` (a short binary message: version, id, node).
//
// Nothing is lost on this side of Redis. The channel is *ready* while the link is up and Redis has confirmed both
// subscriptions since the link last dropped. A message published while it is not ready, or whose PUBLISH fails, is
// kept (an outbox) and sent when it is ready again; a wait's message likewise, and every open wait's message is sent
// again after a resubscription (acknowledgements sent while this node was not subscribed are lost for it).
//
// A wait ends with true when every node it waits for answered, or, from the deadline on, when the nodes that did not
// answer are no longer listed (presence dropped them: they cannot be publishing). Who to wait for, and whether a
// node is listed, mean something only while presence is *known* (its mirror was rebuilt since the link came up):
// until then no wait ends as confirmed, however empty its set, and each time presence is rebuilt the waits take in
// the nodes it lists now. A wait ends with false at the give-up time, or when the node stops. Malformed messages on
// either channel are counted and dropped. Bytes and node names only: no domain. Loop thread only.

/// The control and acknowledgement channels of one node.
public final class ControlChannel {
    /// A change waiting for other nodes' acknowledgements.
    private struct Wait {
        /// Nodes that have not answered yet.
        var nodes: Set<String>
        /// Nodes that answered.
        var answered: Set<String> = []
        /// The message as sent (sent again after a reconnect).
        let message: ControlMessage
        /// Its PUBLISH went out since the last resubscription and did not fail.
        var sent = false
        /// How often it was handed to the link.
        var sends = 0
        /// When it was last handed to the link.
        var lastSent = Int64.min / 2
        /// Who to wait for (asked again at every send).
        let awaiting: () -> Set<String>
        let deadline: Int64
        let giveUp: Int64
        let listed: (String) -> Bool
        let done: (Bool) -> Void
    }

    private let link: any PubSubLink
    private let prefix: String
    /// This node's name (its messages carry it; acknowledgements for it arrive on its ack channel).
    public let node: String
    private let deadlineMs: Int64
    private let giveUpMs: Int64
    private let now: () -> Int64
    private var waits: [UInt64: Wait] = [:]
    /// Redis confirmed the control channel and the ack channel since the link last went down.
    private var controlConfirmed = false
    private var ackConfirmed = false
    /// Starts anywhere: a node restarted under the same name must not take a late acknowledgement meant for the
    /// process before it as one for its own change.
    private var lastAckID = UInt64.random(in: 1...(1 << 62))
    private var timer: LoopTimer?
    /// Messages that wait for nobody, not yet published (the channel was not ready, or their PUBLISH failed).
    private var outbox: [ControlMessage] = []
    /// When `checkDeadlines` last retried what is unsent (at most once a second).
    private var lastRetry = Int64.min / 2
    /// The most the outbox keeps; beyond it the oldest go (counted in `droppedCount`).
    static let outboxLimit = 10_000

    /// True while presence can say who is alive (set by the node: its mirror was rebuilt since the link came up).
    public var presenceKnown: () -> Bool = { true }

    /// A well-formed change from another node.
    public var received: ((ControlMessage) -> Void)?
    /// Both channels are subscribed again (at start, and after every reconnect): what was published while this
    /// node was not subscribed is lost for it, so the node reads the state again; open waits were just resent.
    public var resubscribed: (() -> Void)?
    /// Control messages handed to the link to publish.
    public private(set) var publishedCount: UInt64 = 0
    /// Well-formed control messages from other nodes, and acknowledgements, received.
    public private(set) var receivedCount: UInt64 = 0
    /// Control or acknowledgement messages received and dropped (malformed, or an ack for another node).
    public private(set) var droppedCount: UInt64 = 0
    /// Waits ended at the deadline with some node not answering (it had left presence).
    public private(set) var lapsedCount: UInt64 = 0
    /// Waits given up (answered false): a node neither answered nor left presence, or the link stayed away.
    public private(set) var givenUpCount: UInt64 = 0
    /// Messages of open waits sent again after a reconnect.
    public private(set) var resentCount: UInt64 = 0
    /// Messages waiting in the outbox.
    public var outboxCount: Int { outbox.count }

    /// The link is up and both subscriptions are confirmed since it last dropped.
    private var isReady: Bool { link.isUp && controlConfirmed && ackConfirmed }

    /// The channels of `node` under `prefix`; a wait for acknowledgements lasts at least `deadlineMs`, and is given
    /// up (answered false) after `giveUpMs`.
    public init(
        link: any PubSubLink, prefix: String, node: String, deadlineMs: Int64, giveUpMs: Int64,
        now: @escaping () -> Int64
    ) {
        self.link = link
        self.prefix = prefix
        self.node = node
        self.deadlineMs = deadlineMs
        self.giveUpMs = max(giveUpMs, deadlineMs)
        self.now = now
    }

    /// The channel every node hears changes on.
    public var controlChannel: String { prefix + ":ctl" }
    /// Where acknowledgements for `node` go.
    public func ackChannel(_ node: String) -> String { prefix + ":ack:" + node }
    /// Changes still waiting for acknowledgements.
    public var waitingCount: Int { waits.count }

    /// Subscribes both channels (the link subscribes again after a reconnect) and, given the loop, checks the
    /// waits' deadlines ten times a second on it.
    public func start(loop: UnsafeMutableRawPointer?) {
        link.subscribe(
            controlChannel, { [weak self] bytes in self?.heard(bytes) },
            subscribed: { [weak self] in
                self?.confirmed(control: true)
            })
        link.subscribe(
            ackChannel(node), { [weak self] bytes in self?.heardAck(bytes) },
            subscribed: { [weak self] in
                self?.confirmed(control: false)
            })
        guard let loop else { return }
        let timer = LoopTimer(loop: loop) { [weak self] in self?.checkDeadlines() }
        timer.start(after: 0.1, repeat: 0.1)
        self.timer = timer
    }

    /// Stops the deadline timer and ends every wait, unconfirmed (their answers go out).
    public func stop() {
        timer?.stop()
        timer = nil
        let all = waits.values
        waits = [:]
        givenUpCount &+= UInt64(all.count)
        for wait in all { wait.done(false) }
    }

    /// The link went down: the subscriptions must be confirmed again before anything is sent. Waits stay.
    public func linkLost() {
        controlConfirmed = false
        ackConfirmed = false
    }

    /// The link came up, or presence was rebuilt: sends what waits to go out and ends the waits now complete.
    public func flush() {
        guard isReady else { return }
        let queued = outbox
        outbox = []
        for message in queued { send(message) }
        let known = presenceKnown()
        for (id, var wait) in waits.sorted(by: { $0.key < $1.key }) {
            if known {
                // Who to wait for is asked again: the nodes live now, less those that already answered.
                wait.nodes = wait.nodes.union(wait.awaiting()).subtracting(wait.answered).subtracting([node])
            }
            if wait.sent && known && wait.nodes.isEmpty {
                waits[id] = nil
                wait.done(true)
                continue
            }
            waits[id] = wait
            if !wait.sent { send(wait: id) }
        }
    }

    /// Publishes `message` (its `node` is set to this node's) and waits for nothing; kept until it goes out.
    public func publish(_ message: ControlMessage) {
        var message = message
        message.node = node
        message.ackID = 0
        guard isReady else { return keep(message) }
        send(message)
    }

    /// Publishes `message` now if the channel is ready, waiting for nothing and never kept: news that would be stale
    /// later (a picture to push to whoever is near it now). False when it was not sent; a PUBLISH that fails is lost.
    @discardableResult
    public func publishNow(_ message: ControlMessage) -> Bool {
        guard isReady else { return false }
        var message = message
        message.node = node
        message.ackID = 0
        publishedCount &+= 1
        link.publish(controlChannel, message.encoded(), nil)
        return true
    }

    /// Publishes `message` and calls `done(true)` once each node `awaiting` names (asked now and whenever presence
    /// is rebuilt) acknowledged it or, from the deadline on, is no longer `listed`; `done(false)` at the give-up
    /// time. With the channel ready, presence known and nobody to wait for, `done(true)` runs at once.
    public func publish(
        _ message: ControlMessage, awaiting: @escaping () -> Set<String>, listed: @escaping (String) -> Bool,
        then done: @escaping (Bool) -> Void
    ) {
        var message = message
        message.node = node
        let others = awaiting().subtracting([node])
        if others.isEmpty && isReady && presenceKnown() {
            publish(message)
            return done(true)
        }
        lastAckID &+= 1
        message.ackID = lastAckID
        let now = now()
        waits[lastAckID] = Wait(
            nodes: others, message: message, awaiting: awaiting, deadline: now + deadlineMs,
            giveUp: now + giveUpMs, listed: listed, done: done)
        if isReady { send(wait: lastAckID) }
    }

    /// Ends the waits that are over: past the give-up time (false; the message still goes out, waiting for nobody),
    /// or past the deadline with the channel ready, presence known and every missing node no longer listed (true).
    /// Past the deadline, a wait's message is sent again every second to the nodes still missing (one that missed
    /// it while its own link blinked acknowledges the repeat), and what failed to go out is retried once a second.
    /// The node's timer calls it ten times a second.
    public func checkDeadlines() {
        let now = now()
        for (id, wait) in waits where now >= wait.giveUp {
            waits[id] = nil
            givenUpCount &+= 1
            var message = wait.message
            message.ackID = 0
            keep(message)  // the change is committed: the other nodes must still hear of it
            wait.done(false)
        }
        guard isReady, presenceKnown() else { return }
        for (id, wait) in waits where now >= wait.deadline && wait.sent {
            let missing = wait.nodes.filter(wait.listed)
            if missing.isEmpty {
                waits[id] = nil
                lapsedCount &+= 1
                wait.done(true)
            } else {
                waits[id]?.nodes = missing
                if now - wait.lastSent >= 1000 { send(wait: id) }
            }
        }
        if now - lastRetry >= 1000 {
            lastRetry = now
            flush()
        }
    }

    /// Tells `message`'s sender that this node applied it (when it asked).
    public func acknowledge(_ message: ControlMessage) {
        guard message.ackID != 0 else { return }
        var bytes: [UInt8] = [ControlMessage.version]
        for shift in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: message.ackID >> UInt64(shift * 8))) }
        let name = Array(node.utf8.prefix(ControlMessage.maxNodeBytes))
        bytes.append(UInt8(name.count))
        bytes.append(contentsOf: name)
        link.publish(ackChannel(message.node), bytes, nil)
    }

    /// A message on the control channel (the link's handler; tests call it with raw bytes).
    public func heard(_ bytes: [UInt8]) {
        guard let message = ControlMessage(decoding: bytes) else {
            droppedCount &+= 1
            return
        }
        guard message.node != node else { return }  // our own, back from Redis
        receivedCount &+= 1
        received?(message)
    }

    /// A message on this node's ack channel.
    public func heardAck(_ bytes: [UInt8]) {
        guard bytes.count >= 10, bytes[0] == ControlMessage.version, Int(bytes[9]) == bytes.count - 10,
            let from = String(validating: bytes[10...], as: UTF8.self)
        else {
            droppedCount &+= 1
            return
        }
        var id: UInt64 = 0
        for i in 0..<8 { id |= UInt64(bytes[1 + i]) << UInt64(i * 8) }
        receivedCount &+= 1
        guard var wait = waits[id] else { return }  // ended already (deadline, or a duplicate)
        wait.nodes.remove(from)
        wait.answered.insert(from)
        if wait.nodes.isEmpty && wait.sent && presenceKnown() {
            waits[id] = nil
            wait.done(true)
        } else {
            waits[id] = wait
        }
    }

    /// Redis confirmed one of the two subscriptions; once both are, every open wait is sent again (acks sent while
    /// this node was not subscribed are lost), the node is told, and what waits goes out.
    private func confirmed(control: Bool) {
        if control { controlConfirmed = true } else { ackConfirmed = true }
        guard controlConfirmed && ackConfirmed else { return }
        for id in waits.keys { waits[id]?.sent = false }
        resubscribed?()
        flush()
    }

    private func keep(_ message: ControlMessage) {
        outbox.append(message)
        if outbox.count > Self.outboxLimit {
            outbox.removeFirst(outbox.count - Self.outboxLimit)
            droppedCount &+= 1
        }
    }

    /// Publishes a message that waits for nobody; kept for later if the PUBLISH fails.
    private func send(_ message: ControlMessage) {
        publishedCount &+= 1
        link.publish(controlChannel, message.encoded()) { [weak self] result in
            if case .failure = result { self?.keep(message) }
        }
    }

    /// Publishes wait `id`'s message; marked unsent again if the PUBLISH fails.
    private func send(wait id: UInt64) {
        guard let wait = waits[id] else { return }
        publishedCount &+= 1
        if wait.sends > 0 { resentCount &+= 1 }
        waits[id]?.sends += 1
        waits[id]?.sent = true
        waits[id]?.lastSent = now()
        link.publish(controlChannel, wait.message.encoded()) { [weak self] result in
            if case .failure = result { self?.waits[id]?.sent = false }
        }
    }
}
