// The composition of a node that shares state with other nodes: built on the transport's service thread once its
// libev loop exists (Redis's connections and timers run on that same loop, so every reply and message arrives on
// the thread that owns the hub), wired into the hub through the domain's seams (`RemotePresence`, the cluster
// reading), and stopped on that thread before the loop is destroyed. A single node never builds one.
import CairnCluster
import CairnDomain
import CairnLoop
import Logging

/// A running node's Redis link and shared presence, attached to the hub.
final class ClusterNode {
    let link: RedisLink
    let presence: ClusterPresence
    private let hub: Hub
    private let logger: Logger

    /// Builds and starts the node on `loop`; call on the loop thread.
    init(
        configuration: ClusterConfiguration, endpoint: RedisEndpoint, hub: Hub, loop: UnsafeMutableRawPointer,
        logger: Logger
    ) {
        self.hub = hub
        self.logger = logger
        let node = configuration.nodeName
        link = RedisLink(endpoint: endpoint, loop: loop, confinement: hub.confinement)
        presence = ClusterPresence(
            link: link, loop: loop, node: node, prefix: configuration.prefix,
            refreshSeconds: Double(configuration.presenceRefreshSeconds),
            now: { [clock = hub.clock] in clock.now() })
        let link = self.link
        link.observeState { up in
            if up {
                logger.info("cluster: connected to \(endpoint) (reconnects: \(link.reconnects))")
            } else {
                logger.warning("cluster: lost \(endpoint) (\(link.lastError ?? "closed")); serving local connections")
            }
        }
        presence.remoteChanged = { [unowned hub] user, online in hub.remotePresenceChanged(user, online: online) }
        hub.remotePresence = RedisPresence(presence)
        hub.clusterReading = { ClusterReading(redisUp: link.isUp, reconnects: link.reconnects) }
        presence.start()
        link.start()
        logger.info("cluster: node \(node), prefix \(configuration.prefix), Redis \(endpoint)")
    }

    /// Detaches from the hub, takes this node's users out of the shared presence and closes the link (writing
    /// what is queued first); on the loop thread, after the last connection closed and before the loop goes.
    func stop() {
        hub.remotePresence = nil
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
