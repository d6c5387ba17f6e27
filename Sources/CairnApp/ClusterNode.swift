// The composition of a node that shares state with other nodes: built on the transport's service thread once its
// libev loop exists (Redis's connections and timers run on that same loop, so every reply and message arrives on
// the thread that owns the hub), wired into the hub through the domain's seams (`RemotePresence`, the cluster
// reading), and stopped on that thread before the loop is destroyed. A single node never builds one.
//
// Positions cross nodes here: the protocol layer's `ClusterDelivery` (privacy applied, each level encoded once)
// speaks in kinds, owners and sections; this glue turns them into `FanOutMessage`s on the owners' channels
// (`SubjectChannels`: one subscription per owner this node's viewers follow) and back.
import CairnCluster
import CairnDomain
import CairnLoop
import CairnProtocol
import Logging

/// A running node's Redis link and shared presence, attached to the hub.
final class ClusterNode {
    let link: RedisLink
    let presence: ClusterPresence
    let channels: SubjectChannels
    let delivery: ClusterDelivery
    private let hub: Hub
    private let logger: Logger

    /// Builds and starts the node on `loop`; call on the loop thread.
    init(
        configuration: ClusterConfiguration, endpoint: RedisEndpoint, hub: Hub, router: Router,
        loop: UnsafeMutableRawPointer, logger: Logger
    ) {
        self.hub = hub
        self.logger = logger
        let node = configuration.nodeName
        link = RedisLink(endpoint: endpoint, loop: loop, confinement: hub.confinement)
        presence = ClusterPresence(
            link: link, loop: loop, node: node, prefix: configuration.prefix,
            refreshSeconds: Double(configuration.presenceRefreshSeconds),
            now: { [clock = hub.clock] in clock.now() })
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
        presence.arrived = { [unowned hub] user in hub.remoteViewerArrived(user) }
        let link = self.link
        link.observeState { [unowned delivery] up in
            if !up { delivery.linkLost() }
            if up {
                logger.info("cluster: connected to \(endpoint) (reconnects: \(link.reconnects))")
            } else {
                logger.warning("cluster: lost \(endpoint) (\(link.lastError ?? "closed")); serving local connections")
            }
        }
        presence.remoteChanged = { [unowned hub] user, online in hub.remotePresenceChanged(user, online: online) }
        hub.remotePresence = RedisPresence(presence)
        hub.clusterReading = {
            ClusterReading(
                redisUp: link.isUp, reconnects: link.reconnects, published: channels.publishedCount,
                received: channels.receivedCount, dropped: channels.droppedCount)
        }
        presence.start()
        link.start()
        logger.info("cluster: node \(node), prefix \(configuration.prefix), Redis \(endpoint)")
    }

    /// Detaches from the hub, takes this node's users out of the shared presence and closes the link (writing
    /// what is queued first); on the loop thread, after the last connection closed and before the loop goes.
    func stop() {
        hub.remotePresence = nil
        hub.remoteFanOut = nil
        presence.stop(leaving: true)
        link.stop(flush: true)
    }
}

/// The domain's presence port answered by the node's mirror of Redis.
private final class RedisPresence: RemotePresence {
    private let presence: ClusterPresence
    init(_ presence: ClusterPresence) { self.presence = presence }
    func isOnlineElsewhere(_ user: Int64) -> Bool { presence.isOnlineElsewhere(user) }
    func localPresenceChanged(_ user: Int64, online: Bool) { presence.localChanged(user, online: online) }
}
