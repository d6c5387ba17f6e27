// Who may read `/metrics`. With a token configured, whoever presents it. Without one, the figures are open only
// while the hub listens on a loopback address; a hub that listens beyond the machine (a container's `0.0.0.0`)
// and has no token serves them to loopback peers only, so deploying the image does not publish its operational
// figures to whoever reaches the port. Kept apart from the routes so the rule is tested on its own.

/// The decision for one `/metrics` request.
enum MetricsAccess: Equatable {
    /// Serve the figures.
    case granted
    /// A token is configured and was not presented correctly (401).
    case tokenRequired
    /// No token is configured, the hub listens beyond loopback and the peer is not local (403).
    case localOnly

    /// Decides for a request from `peer` (its address as text) to a hub listening on `host`.
    static func decide(token: String?, presented: String?, host: String, peer: String?) -> MetricsAccess {
        if let token {
            guard let presented, constantTimeEqual(Array(presented.utf8), Array(token.utf8)) else {
                return .tokenRequired
            }
            return .granted
        }
        if isLoopback(host) { return .granted }
        return peer.map(isLoopback) == true ? .granted : .localOnly
    }

    /// True for `localhost`, 127.0.0.0/8, `::1` and IPv4-mapped loopback (`::ffff:127.x.y.z`).
    static func isLoopback(_ address: String) -> Bool {
        let a = address.lowercased()
        if a == "localhost" || a == "::1" || a == "[::1]" { return true }
        let v4 = a.hasPrefix("::ffff:") ? String(a.dropFirst(7)) : a
        let parts = v4.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts.allSatisfy({ UInt8($0) != nil }) else { return false }
        return parts[0] == "127"
    }

    /// Compares without an early exit, so the time taken does not tell how much of a guess was right.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }
}
