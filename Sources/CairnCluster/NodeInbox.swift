// One channel per node (`<prefix>:news:<node>`) for news addressed to users, where the sender knows which nodes the
// users are connected to (the presence mirror) and the news is rare (a chat message, a bucket changed): one message
// per node holding some of the users, instead of a subscription per user. Each node subscribes its own inbox once, at
// start, before its first user is announced in presence, so by the time another node lists a user here the
// subscription is confirmed. Messages are `FanOutMessage`s (the sender's node name is not needed: a node never
// sends to its own inbox); a malformed one is counted and dropped. Bytes only: no domain, no JSON. Loop thread only.

/// This node's inbox and the way to the others'.
public final class NodeInbox {
    private let link: any PubSubLink
    private let prefix: String
    /// This node's name.
    public let node: String

    /// A received, well-formed message.
    public var received: ((FanOutMessage) -> Void)?
    /// Redis confirmed the inbox's subscription (at start and after every reconnect): what was sent here while it
    /// was not subscribed is lost.
    public var subscribed: (() -> Void)?
    /// Messages handed to the link to publish.
    public private(set) var publishedCount: UInt64 = 0
    /// Publishes the link refused or lost (Redis away).
    public private(set) var failedCount: UInt64 = 0
    /// Well-formed messages received.
    public private(set) var receivedCount: UInt64 = 0
    /// Messages received and dropped as malformed.
    public private(set) var droppedCount: UInt64 = 0

    /// The inboxes `<prefix>:news:<node>` over `link`.
    public init(link: any PubSubLink, prefix: String, node: String) {
        self.link = link
        self.prefix = prefix
        self.node = node
    }

    /// The inbox channel of `node`.
    public func channel(of node: String) -> String { "\(prefix):news:\(node)" }

    /// Subscribes this node's inbox (kept across reconnects by the link).
    public func start() {
        link.subscribe(
            channel(of: node), { [weak self] bytes in self?.heard(bytes) },
            subscribed: { [weak self] in self?.subscribed?() })
    }

    /// Stops listening.
    public func stop() { link.unsubscribe(channel(of: node)) }

    /// Publishes `message` to `node`'s inbox; this node's own is never written to.
    public func publish(_ message: FanOutMessage, to node: String) {
        guard node != self.node else { return }
        publishedCount &+= 1
        link.publish(channel(of: node), message.encoded()) { [weak self] result in
            guard case .failure = result else { return }
            self?.failedCount &+= 1
        }
    }

    /// A message arrived on this node's inbox (the link's handler; tests call it with raw bytes).
    public func heard(_ bytes: [UInt8]) {
        guard let message = FanOutMessage(decoding: bytes) else {
            droppedCount &+= 1
            return
        }
        receivedCount &+= 1
        received?(message)
    }
}
