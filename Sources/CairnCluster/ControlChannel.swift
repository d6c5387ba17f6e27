// The control channel: every node subscribes `<prefix>:ctl` at start and hears there each change another node
// committed to state every node keeps in memory (a `ControlMessage`); its own messages coming back are skipped.
// A change the sender must know applied everywhere before it answers (a hide) carries an ack id: each node that
// applies it answers on the sender's `<prefix>:ack:<node>` (a short binary message: version, id, node), and the
// sender's wait ends when every node it waits for answered, or, after the deadline, when the nodes that did not
// answer are no longer listed (presence dropped them: they cannot be publishing). Malformed messages on either
// channel are counted and dropped. Bytes and node names only: no domain. Loop thread only.

/// The control and acknowledgement channels of one node.
public final class ControlChannel {
    /// A change waiting for other nodes' acknowledgements.
    private struct Wait {
        var nodes: Set<String>
        let deadline: Int64
        let listed: (String) -> Bool
        let done: () -> Void
    }

    private let link: any PubSubLink
    private let prefix: String
    /// This node's name (its messages carry it; acknowledgements for it arrive on its ack channel).
    public let node: String
    private let deadlineMs: Int64
    private let now: () -> Int64
    private var waits: [UInt64: Wait] = [:]
    /// Starts anywhere: a node restarted under the same name must not take a late acknowledgement meant for the
    /// process before it as one for its own change.
    private var lastAckID = UInt64.random(in: 1...(1 << 62))
    private var timer: LoopTimer?

    /// A well-formed change from another node.
    public var received: ((ControlMessage) -> Void)?
    /// Control messages handed to the link to publish.
    public private(set) var publishedCount: UInt64 = 0
    /// Well-formed control messages from other nodes, and acknowledgements, received.
    public private(set) var receivedCount: UInt64 = 0
    /// Control or acknowledgement messages received and dropped (malformed, or an ack for another node).
    public private(set) var droppedCount: UInt64 = 0
    /// Waits ended at the deadline with some node not answering (it had left presence).
    public private(set) var lapsedCount: UInt64 = 0

    /// The channels of `node` under `prefix`; a wait for acknowledgements lasts at least `deadlineMs`.
    public init(link: any PubSubLink, prefix: String, node: String, deadlineMs: Int64, now: @escaping () -> Int64) {
        self.link = link
        self.prefix = prefix
        self.node = node
        self.deadlineMs = deadlineMs
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
        link.subscribe(controlChannel) { [weak self] bytes in self?.heard(bytes) }
        link.subscribe(ackChannel(node)) { [weak self] bytes in self?.heardAck(bytes) }
        guard let loop else { return }
        let timer = LoopTimer(loop: loop) { [weak self] in self?.checkDeadlines() }
        timer.start(after: 0.1, repeat: 0.1)
        self.timer = timer
    }

    /// Stops the deadline timer and ends every wait (their answers go out).
    public func stop() {
        timer?.stop()
        timer = nil
        releaseAll()
    }

    /// Publishes `message` (its `node` is set to this node's) and waits for nothing.
    public func publish(_ message: ControlMessage) {
        var message = message
        message.node = node
        message.ackID = 0
        send(message)
    }

    /// Publishes `message` and calls `done` once each of `nodes` acknowledged it or, from the deadline on, is no
    /// longer `listed`. With no nodes to wait for, `done` runs at once.
    public func publish(
        _ message: ControlMessage, awaiting nodes: Set<String>, listed: @escaping (String) -> Bool,
        then done: @escaping () -> Void
    ) {
        var message = message
        message.node = node
        let others = nodes.subtracting([node])
        guard !others.isEmpty else {
            publish(message)
            return done()
        }
        lastAckID &+= 1
        message.ackID = lastAckID
        waits[lastAckID] = Wait(nodes: others, deadline: now() + deadlineMs, listed: listed, done: done)
        send(message)
    }

    /// Ends the waits past their deadline whose missing nodes are no longer listed; the node's timer calls it.
    public func checkDeadlines() {
        let now = now()
        for (id, wait) in waits where now >= wait.deadline {
            let missing = wait.nodes.filter(wait.listed)
            if missing.isEmpty {
                waits[id] = nil
                lapsedCount &+= 1
                wait.done()
            } else {
                waits[id]?.nodes = missing
            }
        }
    }

    /// Ends every wait at once (the node is stopping, or Redis is away and nobody can answer).
    public func releaseAll() {
        let all = waits.values
        waits = [:]
        for wait in all { wait.done() }
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
        if wait.nodes.isEmpty {
            waits[id] = nil
            wait.done()
        } else {
            waits[id] = wait
        }
    }

    private func send(_ message: ControlMessage) {
        publishedCount &+= 1
        link.publish(controlChannel, message.encoded(), nil)
    }
}
