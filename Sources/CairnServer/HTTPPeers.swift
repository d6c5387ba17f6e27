// Open plain-HTTP connections per source address. A connection is counted from its first request until lws reports
// it gone, and one address may hold at most `ServerConfiguration.httpConnectionsPerAddress` at once: more are answered
// 429 and closed, so one host cannot hold hundreds of requests open (each keeps a socket and up to 64 KiB of early
// body) however it spreads them. Loopback is not counted unless configured (a reverse proxy on the machine speaks
// for everyone), as for the WebSocket limit `connections.per_address`, which the domain keeps for upgraded
// connections; a WebSocket upgrade never reaches this count.

/// The per-address count of HTTP connections. Loop thread only (a plain value in `HTTPEndpoint`).
struct HTTPPeers {
    /// Connections one address may hold (0: no limit).
    let limit: Int
    /// Whether loopback addresses are counted too.
    let countsLoopback: Bool
    /// The counted address of each connection, by wsi address.
    private var peers: [UInt: String] = [:]
    /// Open connections per counted address.
    private var counts: [String: Int] = [:]

    init(configuration: ServerConfiguration) {
        limit = configuration.httpConnectionsPerAddress
        countsLoopback = configuration.httpPerAddressCountsLoopback
    }

    /// Counts the connection `wsi` from `peer` (once per connection; later requests on it pass). False when its
    /// address already holds `limit` others: the request is to be refused, and the connection is not counted.
    mutating func admit(_ wsi: UInt, peer: String?) -> Bool {
        guard limit > 0, peers[wsi] == nil, let peer else { return true }
        if !countsLoopback && MetricsAccess.isLoopback(peer) { return true }
        let count = counts[peer] ?? 0
        guard count < limit else { return false }
        counts[peer] = count + 1
        peers[wsi] = peer
        return true
    }

    /// The connection is gone.
    mutating func forget(_ wsi: UInt) {
        guard let peer = peers.removeValue(forKey: wsi), let count = counts[peer] else { return }
        counts[peer] = count > 1 ? count - 1 : nil
    }

    /// Addresses with an open connection counted.
    var addresses: Int { counts.count }
}
