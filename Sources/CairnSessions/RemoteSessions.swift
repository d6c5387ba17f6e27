// Sessions beyond this process. With several nodes, a logout, a logout everywhere or a suspension is committed to
// the shared store through one node, and the store refuses the token from then on on every node; but connections
// that authenticated with it before stay open on the other nodes unless they hear of it. `Sessions` tells this port
// after each such commit; the composition publishes it to the other nodes, and hands what they publish back to
// `Sessions.applyRemote…` (through the hub), which ends the matching sessions as a local logout or suspension does
// (and refuses account checks that began before). A token never leaves the node: only the first 16 bytes of its
// SHA-256 travel, enough to pick a user's connections that used it. A single node has no implementation and nothing
// changes. Loop thread only.
public import CairnCore
import CairnCrypto

/// Identifies a token without revealing it: the first 16 bytes of its SHA-256, as two integers.
public struct TokenFingerprint: Hashable, Sendable {
    /// Bytes 0–7 (big-endian).
    public let high: Int64
    /// Bytes 8–15 (big-endian).
    public let low: Int64

    /// The fingerprint of `token`.
    public init(token: String) {
        let digest = Digest.sha256(Array(token.utf8))
        func integer(_ at: Int) -> Int64 {
            var value: UInt64 = 0
            for byte in digest[at..<at + 8] { value = value << 8 | UInt64(byte) }
            return Int64(bitPattern: value)
        }
        self.init(high: integer(0), low: integer(8))
    }

    /// A fingerprint as carried between nodes.
    public init(high: Int64, low: Int64) {
        self.high = high
        self.low = low
    }
}

/// Where sessions ended here for reasons that hold on every node go.
public protocol RemoteSessions: AnyObject {
    /// A token of `user` was revoked (a logout, committed).
    func tokenRevoked(user: Int64, fingerprint: TokenFingerprint)
    /// Every session of `user` ended (committed): `.tokenRevoked` for a logout everywhere, `.suspended`.
    func sessionsEnded(user: Int64, why: SessionEnd)
}
