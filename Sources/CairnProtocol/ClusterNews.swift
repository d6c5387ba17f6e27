// User-addressed news across nodes: what the domain tells a user who did not ask (a chat message, a conversation
// read on another device, a bucket changed or gone, an item left behind or found again) reaches the user's
// connections on every node, not only on the node that committed it. The committing node encodes the event once —
// the same bytes its own connections get — and hands it to the cluster glue with the users the presence mirror says
// are online elsewhere; the glue sends one message per node holding some of them (its inbox channel). The receiving
// node writes the bytes to every connection of each listed user it has, as a local event would be written.
//
// What is not carried here: presence (the mirror itself announces it), friend events (the control channel carries the
// change and each node announces what it applied, `Social+RemoteNews`), relic events (each node works out who stands
// inside a relic from its own users' positions), positions and item positions (their own channels, latest wins),
// stats and pictures (addressed to connections, not users). Bucket news also tells the receiving node that a user's
// view of buckets changed, so the items its watching connections follow are read again and, for a bucket lost, its
// items' pending positions are withdrawn (`Trackers.bucketNewsHeard`). A left-behind alert is not written to a user
// this node judges itself (the user reports positions here too: this node tells them its own verdicts).
//
// Like positions, news is not replayed: a user who arrives on a node, or a node whose link is down, while it is
// sent misses it live (chat history, `bucket.list` and `items.watch` answer what is current). The node
// (CairnNodes) turns the calls into binary messages on Redis and back; this file knows no Redis.
import CairnCore
import CairnLoop
import CairnSessions

/// User-addressed events to and from other nodes. Loop thread only.
public final class ClusterNews {
    /// What a piece of news is, for the receiving node (the section's tag on the wire).
    public enum Tag: UInt8, Sendable {
        /// An event the listed users' connections get as it is (`chat.msg`, `chat.read`).
        case event = 0
        /// `bucket.changed` (the message's subject: the bucket): the users' followed items are read again too.
        case bucketChanged = 1
        /// `bucket.removed` (subject: the bucket): its items' pending positions are withdrawn from the users' watching
        /// connections here, and what they follow is read again.
        case bucketRemoved = 2
        /// `item.left_behind` or `item.reunited`: not written to a user whose alerts this node judges itself (the
        /// user reports positions here too, and this node tells them its own verdicts).
        case ownerAlert = 3
    }

    private let local: LocalDelivery
    private let sessions: Sessions
    /// Sends `payload` about `subject` (a bucket, or 0) to the nodes where `users` are connected (set by the glue);
    /// never called with no users.
    public var send: ((_ tag: Tag, _ subject: Int64, _ users: [Int64], _ payload: [UInt8]) -> Void)?
    /// True when `user` is connected to another node (the presence mirror; set at attach).
    var elsewhere: ((Int64) -> Bool)?
    /// Users here heard that a bucket changed (set at attach).
    var bucketChanged: ((_ users: [Int64]) -> Void)?
    /// Users here heard that they lost sight of a bucket (set at attach).
    var bucketRemoved: ((_ bucket: Int64, _ users: [Int64]) -> Void)?
    /// True when this node judges `user`'s left-behind alerts itself (set at attach).
    var judgesAlerts: ((Int64) -> Bool)?
    /// News handed to the glue, and news received and written here.
    public private(set) var sentCount: UInt64 = 0
    public private(set) var deliveredCount: UInt64 = 0
    /// News received and refused: an unknown tag, or bytes that are not one event of the tag's kinds.
    public private(set) var refusedCount: UInt64 = 0

    init(local: LocalDelivery, sessions: Sessions) {
        self.local = local
        self.sessions = sessions
    }

    /// The tag `event` travels under and its subject, or nil when it does not cross nodes this way.
    static func tag(of event: HubEvent) -> (tag: Tag, subject: Int64)? {
        switch event {
        case .chatMessage, .chatRead: (.event, 0)
        case .itemLeftBehind, .itemReunited: (.ownerAlert, 0)
        case .bucketChanged(let bucket): (.bucketChanged, bucket)
        case .bucketRemoved(let bucket): (.bucketRemoved, bucket)
        case .presence, .friendRequest, .friendAccepted, .friendRemoved, .relicAppeared, .relicVanished, .relicExpired,
            .pictureNew, .stats:
            nil
        }
    }

    // MARK: The committing node

    /// `event` went to `users`' connections here: those of them connected elsewhere get it there.
    func forward(_ event: HubEvent, to users: [Int64]) {
        guard let send, let elsewhere, let (tag, subject) = Self.tag(of: event) else { return }
        let targets = Array(Set(users.filter(elsewhere))).sorted()
        guard !targets.isEmpty else { return }
        sentCount &+= 1
        send(tag, subject, targets, local.encoded(event))
    }

    // MARK: The receiving node

    /// Another node sent `payload` (under `tag`, about `subject`) for `users`: each of their connections here gets it.
    /// A tag this build does not know is a newer node's: ignored.
    public func received(tag rawTag: UInt8, subject: Int64, users: [Int64], payload: [UInt8]) {
        guard let tag = Tag(rawValue: rawTag) else { return }
        guard Self.isNews(payload, tag: tag) else {
            refusedCount &+= 1
            return
        }
        var here = Array(Set(users.filter(sessions.isOnline))).sorted()
        if tag == .ownerAlert, let judgesAlerts { here.removeAll(where: judgesAlerts) }
        guard !here.isEmpty else { return }
        deliveredCount &+= 1
        if let outbound = local.outbound {
            payload.withUnsafeBytes { bytes in
                for user in here {
                    for connection in sessions.connections(of: user) { outbound.send(connection, bytes) }
                }
            }
        }
        switch tag {
        case .bucketChanged: bucketChanged?(here)
        case .bucketRemoved: bucketRemoved?(subject, here)
        case .event, .ownerAlert: break
        }
    }

    private static let eventNames: [Tag: [[UInt8]]] = [
        .event: ["chat.msg", "chat.read"].map(ClusterNews.prefix),
        .bucketChanged: [ClusterNews.prefix("bucket.changed")],
        .bucketRemoved: [ClusterNews.prefix("bucket.removed")],
        .ownerAlert: ["item.left_behind", "item.reunited"].map(ClusterNews.prefix),
    ]

    private static func prefix(_ name: String) -> [UInt8] { Array(#"{"ev":""#.utf8) + Array(name.utf8) + [0x22] }

    /// True for one JSON object on one line, valid UTF-8, opening with one of `tag`'s event names, as `LocalDelivery`
    /// encodes them (the receiving node writes it to sockets as a text frame).
    static func isNews(_ payload: [UInt8], tag: Tag) -> Bool {
        guard payload.last == UInt8(ascii: "}"), !payload.contains(UInt8(ascii: "\n")),
            eventNames[tag, default: []].contains(where: { payload.count > $0.count && payload.starts(with: $0) })
        else { return false }
        return String(validating: payload, as: UTF8.self) != nil
    }
}
