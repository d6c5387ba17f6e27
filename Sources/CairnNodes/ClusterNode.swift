// A node that shares state with other nodes: built on the transport's service thread once its libev loop exists
// (Redis's connections and timers run on that same loop, so every reply and message arrives on the thread that owns
// the hub), plugged into the features' `Remote*` ports and the stats channel's cluster reading, and stopped on that
// thread before the loop is destroyed. A single node never builds one.
//
// Positions cross nodes here: the protocol layer's `ClusterDelivery` (privacy applied, each level encoded once)
// speaks in kinds, owners and sections; this glue turns them into `FanOutMessage`s on the owners' channels
// (`SubjectChannels`: one subscription per owner this node's viewers follow) and back.
//
// Changes every node keeps in memory (friendships, rules, logouts, relics, settings, buckets...) committed here go to
// every other node on the control channel (`ControlChannel`) through the features' `Remote*` ports (the `*Control`
// files); what other nodes publish there is read by its kind (`ControlKind`, one lookup), applied to the features
// through the same paths as a local change, and acknowledged when its sender waits (a hide or an unfriend: answered
// once every node where the owner is connected applied it).
//
// Every message the link publishes is sealed with HMAC-SHA-256 under the cluster's key (`MessageSeal`), and every
// message heard is opened before anything parses it: one that does not verify is dropped, counted with the cluster's
// dropped messages and logged (at most once a minute, with how many since).
//
// The node's name is claimed at every presence refresh (`NodeNameClaim`): another running process found using it
// is logged and counted at every refresh that finds it, and the process that started later stops (`nameTaken`)
// without touching the presence entries it shares with the other one.
import CairnAdmin
import CairnBuckets
package import CairnCluster
import CairnCore
import CairnCrypto
package import CairnHub
import CairnLiveMap
import CairnLoop
import CairnPictures
package import CairnProtocol
import CairnRelics
import CairnSessions
import CairnSocial
import CairnStats
import CairnTrackers
package import Logging

/// A running node's Redis link and shared presence, attached to the hub.
package final class ClusterNode {
    /// What a node is told by its configuration (`[cluster]`).
    package struct Settings: Sendable {
        /// This node's name, unique among the nodes.
        package var node: String
        /// Prefix of every Redis key and channel the nodes use.
        package var prefix: String
        /// Seconds between refreshes of this node's presence in Redis.
        package var presenceRefreshSeconds: Int
        /// Milliseconds a hide or an unfriend waits for every node where the owner is connected.
        package var ackTimeoutMs: Int
        /// For tests only: each control message from another node is handled this many ms after it arrives.
        package var applyDelayMs: Int64

        package init(node: String, prefix: String, presenceRefreshSeconds: Int, ackTimeoutMs: Int, applyDelayMs: Int64)
        {
            self.node = node
            self.prefix = prefix
            self.presenceRefreshSeconds = presenceRefreshSeconds
            self.ackTimeoutMs = ackTimeoutMs
            self.applyDelayMs = applyDelayMs
        }
    }

    let link: RedisLink
    let presence: ClusterPresence
    let channels: SubjectChannels
    let delivery: ClusterDelivery
    let control: ControlChannel
    let claim: NodeNameClaim
    /// Another running process holds this node's name and started first: this one must stop (the message says why).
    package var nameTaken: ((String) -> Void)?
    /// Set once this node gave its name up: it leaves the shared entries (the other process's too) as they are.
    private var yielded = false
    /// News for users connected to other nodes, and this node's inbox for theirs (set at start).
    private(set) var news: ClusterNews?
    private(set) var inbox: NodeInbox?
    /// With a shared store: the reads that make up for missed control messages, and the position fence.
    private var catchUp: ClusterCatchUp?
    /// Holds control messages back before they are handled (tests only: `serve --cluster-apply-delay-ms`).
    private var applyDelay: ControlApplyDelay?
    private let hub: Hub
    private let logger: Logger
    /// When a refused message was last logged, and how many were refused since.
    private var lastRefusalLogged = Int64.min / 2
    private var refusedSinceLogged = 0

    /// Builds and starts the node on `loop`; call on the loop thread. `key` signs and checks every message on
    /// Redis. `sharedStore`: the nodes share one store (storage.url), which is then read again to make up for missed
    /// control messages; with a store of its own, a node has nothing to read the others' changes from.
    package init(
        configuration: Settings, endpoint: RedisEndpoint, key: [UInt8], sharedStore: Bool, hub: Hub,
        router: Router, loop: UnsafeMutableRawPointer, logger: Logger
    ) {
        self.hub = hub
        self.logger = logger
        let node = configuration.node
        link = RedisLink(
            endpoint: endpoint, loop: loop, confinement: hub.confinement, channelPrefix: configuration.prefix,
            seal: MessageSeal { [prepared = HMAC.PreparedKey(key)] in prepared.sha256($0) })
        presence = ClusterPresence(
            link: link, loop: loop, node: node, prefix: configuration.prefix,
            refreshSeconds: Double(configuration.presenceRefreshSeconds),
            now: { [clock = hub.clock] in clock.now() })
        claim = NodeNameClaim(
            link: link, node: node, prefix: configuration.prefix,
            holder: .init(
                instance: Base64URL.encode(SecureRandom().bytes(12)), startedAtMs: hub.clock.now()))
        let channels = SubjectChannels(link: link, prefix: configuration.prefix)
        let delivery = router.attachClusterDelivery()
        self.channels = channels
        self.delivery = delivery
        delivery.send = { kind, owner, sections in
            channels.publish(
                FanOutMessage(
                    kind: kind.rawValue, subject: owner,
                    sections: sections.map { .init(tag: $0.tag, recipients: $0.viewers, payload: $0.payload) }))
        }
        delivery.listen = { owner, on in
            if on { channels.retain(owner) } else { channels.release(owner) }
        }
        channels.received = { [unowned delivery] message in
            // A kind this build does not know is a newer node's: counted as received, ignored.
            guard let kind = ClusterDelivery.Kind(rawValue: message.kind) else { return }
            delivery.received(
                kind, owner: message.subject,
                sections: message.sections.map { ($0.tag, $0.recipients, $0.payload) })
        }
        presence.arrived = { [unowned hub] user in hub.liveMap.remoteViewerArrived(user) }
        // A wait is given up once a silent node would have dropped out of presence twice over (its entry lives three
        // refresh periods): by then it has either answered, left, or read the change from the store by itself.
        let presenceTTLMs = Int64(configuration.presenceRefreshSeconds) * 3000
        if configuration.presenceRefreshSeconds < 4 {
            // A node cut off without a word is noticed within 8 s (three missed heartbeats of 2 s) and then reads
            // the store at once; the others stop waiting for it two refresh periods plus 2 s after the cut.
            logger.warning(
                "cluster.presence_refresh below 4 s: a node cut off from Redis may be given up before it noticed")
        }
        let control = ControlChannel(
            link: link, prefix: configuration.prefix, node: node, deadlineMs: Int64(configuration.ackTimeoutMs),
            giveUpMs: Int64(configuration.ackTimeoutMs) + 2 * presenceTTLMs,
            now: { [clock = hub.clock] in clock.now() })
        self.control = control
        let handle: (ControlMessage) -> Void = { [unowned hub, unowned control] message in
            // A kind or a code this build does not know is a newer node's: counted as received, ignored.
            guard let payload = ControlKind.payload(of: message) else { return }
            hub.confinement.assertOnLoop()
            payload.apply(to: hub, logger: logger)
            control.acknowledge(message)
        }
        if configuration.applyDelayMs > 0 {
            let ms = configuration.applyDelayMs
            let warning =
                "--cluster-apply-delay-ms \(ms): every control message is handled \(ms) ms after it arrives "
                + "(for tests only; never in production)"
            logger.warning("cluster: \(warning)")
            let delay = ControlApplyDelay(
                delayMs: ms, loop: loop, now: { [clock = hub.clock] in clock.now() }, handle: handle)
            applyDelay = delay
            control.received = { [unowned delay] message in delay.hold(message) }
        } else {
            control.received = handle
        }
        hub.social.remote = SocialControl(control: control, presence: presence)
        hub.sessions.remoteSessions = SessionControl(control: control)
        if sharedStore { hub.relics.remote = RelicControl(control: control) }  // read back from the shared store
        if sharedStore { hub.pictures.remote = PictureControl(control: control) }  // likewise
        if sharedStore { hub.buckets.remote = BucketControl(control: control) }
        if sharedStore { hub.administration.remote = SettingsControl(control: control) }  // the others read the store
        delivery.wanted = { [link = self.link, unowned control] owner, viewer in
            link.afterSubscriptions { confirmed in
                guard confirmed else { return }  // the reconnect's arrival news make up for it
                control.publish(PositionAsked(owner: owner, viewer: viewer))
            }
        }
        // What was published while this node was not subscribed is lost for it: with a shared store it reads the
        // store until caught up, and fences its positions while it cannot (ClusterCatchUp).
        let catchUp =
            sharedStore
            ? ClusterCatchUp(hub: hub, loop: loop, fenceMs: Int64(configuration.ackTimeoutMs), logger: logger) : nil
        self.catchUp = catchUp
        control.resubscribed = { [unowned hub] in
            guard let catchUp else { return }
            catchUp.subscribed()
            // Logouts and suspensions published while this node was not subscribed are lost for it.
            hub.sessions.recheckTokens { result in
                if case .success(let ended) = result, ended > 0 {
                    logger.info("cluster: \(ended) connections closed whose token or account the store refuses now")
                }
            }
        }
        control.presenceKnown = { [unowned presence] in presence.isCurrent }
        presence.rebuilt = { [unowned control] in control.flush() }
        presence.refreshing = { [unowned claim] in claim.claim() }
        claim.conflict = { [unowned self] other, yields in self.nameConflict(with: other, yields: yields) }
        let link = self.link
        link.refused = { [unowned self] channel in self.refused(on: channel) }
        link.observeState { [unowned delivery] up in
            if up {
                control.flush()
            } else {
                delivery.linkLost()
                control.linkLost()  // waits and unsent messages stay, and go out once subscribed again
                catchUp?.linkLost()
            }
            if up {
                logger.info("cluster: connected to \(endpoint) (reconnects: \(link.reconnects))")
            } else {
                logger.warning("cluster: lost \(endpoint) (\(link.lastError ?? "closed")); serving local connections")
            }
        }
        presence.remoteChanged = { [unowned hub] user, online in
            hub.social.applyRemotePresence(user, online: online)
        }
        hub.sessions.remotePresence = RedisPresence(presence)
        hub.statsChannel.clusterReading = { [claim] in
            ClusterReading(
                redisUp: link.isUp, reconnects: link.reconnects,
                published: channels.publishedCount &+ control.publishedCount,
                received: channels.receivedCount &+ control.receivedCount,
                dropped: channels.droppedCount &+ control.droppedCount &+ link.refusedCount,
                nodeNameConflicts: claim.conflicts)
        }
        attachItems(prefix: configuration.prefix)
        // User ids mean the same on every node only with one shared store.
        if sharedStore { attachNews(router: router, prefix: configuration.prefix) }
        presence.start()
        control.start(loop: loop)
        link.start()
        logger.info("cluster: node \(node), prefix \(configuration.prefix), Redis \(endpoint)")
    }

    /// A message on `channel` did not carry the cluster's signature: logged at most once a minute.
    private func refused(on channel: String) {
        refusedSinceLogged += 1
        let now = hub.clock.now()
        guard now - lastRefusalLogged >= 60_000 else { return }
        lastRefusalLogged = now
        let count = refusedSinceLogged
        refusedSinceLogged = 0
        let text =
            "cluster: dropped \(count) message(s) not signed with the cluster key (last on \(channel)); is a host "
            + "without the key publishing on this Redis, or do the nodes hold different cluster.key values?"
        logger.warning("\(text)")
    }

    /// Another running process uses this node's name: logged every time it is found; the one that started later
    /// stops (as a hub that refuses to start), the other keeps serving.
    private func nameConflict(with other: NodeNameClaim.Holder, yields: Bool) {
        let name = claim.node
        let who = "instance \(other.instance), started at \(other.startedAtMs) ms"
        guard yields else {
            let text =
                "cluster: another running hub uses this node's name \"\(name)\" (\(who)); it started later and stops "
                + "itself; give every hub its own cluster.node (conflicts: \(claim.conflicts))"
            logger.error("\(text)")
            return
        }
        guard !yielded else { return }
        yielded = true
        let text =
            "cluster.node \"\(name)\" is in use by another running hub (\(who), before this one): this hub stops; "
            + "give every hub its own cluster.node"
        logger.critical("\(text)")
        nameTaken?(text)
    }

    /// Detaches from the hub, takes this node's users out of the shared presence and closes the link (writing
    /// what is queued first); on the loop thread, after the last connection closed and before the loop goes. A node
    /// that gave its name up leaves presence as it is: the entries under that name are the other process's too.
    package func stop() {
        catchUp?.stop()
        applyDelay?.stop()
        news?.send = nil
        inbox?.stop()
        hub.sessions.remotePresence = nil
        hub.liveMap.remote = nil
        hub.trackers.remote = nil
        hub.social.remote = nil
        hub.sessions.remoteSessions = nil
        hub.relics.remote = nil
        hub.pictures.remote = nil
        hub.buckets.remote = nil
        hub.administration.remote = nil
        control.stop()
        presence.stop(leaving: !yielded)
        if !yielded { claim.release() }
        link.stop(flush: true)
    }
}

// MARK: Items

extension ClusterNode {
    /// Item moves cross nodes on the items' channels (`<prefix>:i:<item>`, one subscription per item a watching
    /// connection here may view): `ClusterItems` speaks in items and sections, this turns them into `FanOutMessage`s
    /// and back. Their counts join the node's cluster reading.
    private func attachItems(prefix: String) {
        let itemChannels = SubjectChannels(link: link, prefix: prefix, letter: "i")
        let items = ClusterItems(hub: hub)
        items.send = { kind, item, sections in
            itemChannels.publish(
                FanOutMessage(
                    kind: kind.rawValue, subject: item,
                    sections: sections.map { .init(tag: $0.tag, recipients: $0.viewers, payload: $0.payload) }))
        }
        items.listen = { item, on in
            if on { itemChannels.retain(item) } else { itemChannels.release(item) }
        }
        itemChannels.received = { [unowned items] message in
            // A kind this build does not know is a newer node's: counted as received, ignored.
            guard let kind = ClusterItems.Kind(rawValue: message.kind) else { return }
            items.received(
                kind, item: message.subject, sections: message.sections.map { ($0.tag, $0.recipients, $0.payload) })
        }
        hub.trackers.remote = items
        guard let reading = hub.statsChannel.clusterReading else { return }
        hub.statsChannel.clusterReading = {
            var total = reading()
            total.published &+= itemChannels.publishedCount
            total.received &+= itemChannels.receivedCount
            total.dropped &+= itemChannels.droppedCount
            return total
        }
    }
}

// MARK: News

extension ClusterNode {
    /// The kind of a `FanOutMessage` carrying user-addressed news (in a node's inbox).
    static let newsKind: UInt8 = 5

    /// User-addressed news (`ClusterNews`) crosses nodes through their inboxes (`<prefix>:news:<node>`): the users
    /// connected elsewhere are grouped by the nodes the presence mirror lists them on, one message per node. The
    /// inbox is subscribed before presence starts, so it is confirmed before any user here is announced.
    private func attachNews(router: Router, prefix: String) {
        let presence = self.presence
        let inbox = NodeInbox(link: link, prefix: prefix, node: presence.node)
        let news = router.attachClusterNews(online: { presence.isOnlineElsewhere($0) })
        news.send = { tag, subject, users, payload in
            var byNode: [String: [Int64]] = [:]
            for user in users {
                for node in presence.nodes(of: user) { byNode[node, default: []].append(user) }
            }
            for (node, listed) in byNode.sorted(by: { $0.key < $1.key }) {
                let section = FanOutMessage.Section(tag: tag.rawValue, recipients: listed, payload: payload)
                inbox.publish(FanOutMessage(kind: Self.newsKind, subject: subject, sections: [section]), to: node)
            }
        }
        inbox.received = { [unowned news] message in
            // A kind this build does not know is a newer node's: counted as received, ignored.
            guard message.kind == Self.newsKind else { return }
            for section in message.sections {
                news.received(
                    tag: section.tag, subject: message.subject, users: section.recipients, payload: section.payload)
            }
        }
        // Bucket news sent while the inbox was not subscribed is lost: what watchers here follow is read again.
        inbox.subscribed = { [unowned hub] in hub.trackers.refollowWatchers() }
        inbox.start()
        self.news = news
        self.inbox = inbox
        guard let reading = hub.statsChannel.clusterReading else { return }
        hub.statsChannel.clusterReading = {
            var total = reading()
            total.published &+= inbox.publishedCount
            total.received &+= inbox.receivedCount
            total.dropped &+= inbox.droppedCount &+ news.refusedCount
            return total
        }
    }
}

/// The domain's presence port answered by the node's mirror of Redis.
private final class RedisPresence: RemotePresence {
    private let presence: ClusterPresence
    init(_ presence: ClusterPresence) { self.presence = presence }
    func isOnlineElsewhere(_ user: Int64) -> Bool { presence.isOnlineElsewhere(user) }
    func localPresenceChanged(_ user: Int64, online: Bool) { presence.localChanged(user, online: online) }
}
