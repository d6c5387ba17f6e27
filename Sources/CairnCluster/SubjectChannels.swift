// A channel per subject (a user whose moves other nodes may want: `<prefix>:u:<id>`; an item: `<prefix>:i:<id>`, a
// second instance), subscribed once per node and
// only while wanted: the glue retains a subject for each local reason to hear it (a viewer here who may see that
// user) and releases it when the reason goes; the first retain subscribes, the last release unsubscribes. Messages
// are `FanOutMessage`s: publishing encodes one, receiving decodes it and checks it belongs to the channel it came
// on; a malformed or misaddressed one is counted and dropped. Counts what it published, received and dropped, for
// /metrics and the stats channel. Bytes only: no domain, no JSON. Loop thread only (the link's callbacks run there).

/// What `SubjectChannels` needs of the link (RedisLink; a fake in tests).
public protocol PubSubLink: AnyObject {
    /// Delivers every message on `channel` to `handler`, now and after every reconnect; `subscribed` runs each time
    /// the subscription is confirmed (from then on, what is published on the channel arrives).
    func subscribe(_ channel: String, _ handler: @escaping ([UInt8]) -> Void, subscribed: (() -> Void)?)
    /// Stops delivering `channel`.
    func unsubscribe(_ channel: String)
    /// True while the link can publish and receive.
    var isUp: Bool { get }
    /// Publishes `payload` on `channel`; `done` learns whether it went out.
    func publish(_ channel: String, _ payload: [UInt8], _ done: ((Result<RedisValue, RedisError>) -> Void)?)
}

extension RedisLink: PubSubLink {}

extension PubSubLink {
    /// Subscribes without asking to hear the confirmations.
    public func subscribe(_ channel: String, _ handler: @escaping ([UInt8]) -> Void) {
        subscribe(channel, handler, subscribed: nil)
    }
}

/// Refcounted per-subject channels carrying `FanOutMessage`s.
public final class SubjectChannels {
    private let link: any PubSubLink
    private let prefix: String
    private var references: [Int64: Int] = [:]

    /// A received, well-formed message for a retained subject.
    public var received: ((FanOutMessage) -> Void)?
    /// Messages handed to the link to publish (one per move with viewers elsewhere, not one per viewer).
    public private(set) var publishedCount: UInt64 = 0
    /// Publishes the link refused or lost (Redis away).
    public private(set) var failedCount: UInt64 = 0
    /// Well-formed messages received.
    public private(set) var receivedCount: UInt64 = 0
    /// Messages received and dropped: malformed, or not about the channel's subject.
    public private(set) var droppedCount: UInt64 = 0

    /// Channels `<prefix>:<letter>:<subject>` over `link` (`u` for users, `i` for items).
    public init(link: any PubSubLink, prefix: String, letter: String = "u") {
        self.link = link
        self.prefix = "\(prefix):\(letter):"
    }

    /// The channel of `subject`.
    public func channel(_ subject: Int64) -> String { prefix + String(subject) }

    /// Subjects subscribed now.
    public var subscribedCount: Int { references.count }

    /// Reasons held for `subject` (0: not subscribed).
    public func references(of subject: Int64) -> Int { references[subject] ?? 0 }

    /// One more reason to hear `subject`; the first subscribes.
    public func retain(_ subject: Int64) {
        let count = (references[subject] ?? 0) + 1
        references[subject] = count
        guard count == 1 else { return }
        link.subscribe(channel(subject)) { [weak self] bytes in self?.heard(bytes, on: subject) }
    }

    /// One reason fewer; the last unsubscribes. A release without a retain is ignored.
    public func release(_ subject: Int64) {
        guard let count = references[subject] else { return }
        if count > 1 {
            references[subject] = count - 1
            return
        }
        references[subject] = nil
        link.unsubscribe(channel(subject))
    }

    /// Publishes `message` on its subject's channel.
    public func publish(_ message: FanOutMessage) {
        publishedCount &+= 1
        link.publish(channel(message.subject), message.encoded()) { [weak self] result in
            guard case .failure = result else { return }
            self?.failedCount &+= 1
        }
    }

    /// A message arrived on `subject`'s channel (the link's handler; tests call it with raw bytes).
    public func heard(_ bytes: [UInt8], on subject: Int64) {
        guard references[subject] != nil else { return }  // unsubscribed while it was on its way
        guard let message = FanOutMessage(decoding: bytes), message.subject == subject else {
            droppedCount &+= 1
            return
        }
        receivedCount &+= 1
        received?(message)
    }
}
