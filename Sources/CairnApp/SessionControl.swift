// The domain's `RemoteSessions` port on the control channel, and the way back: a logout (the token's fingerprint),
// a logout everywhere or a suspension committed through this node ends the matching sessions on every other node,
// which apply it through the same domain paths a local one takes. Fire and forget: the store already refuses the
// token (or the suspended account) on every node; the message closes connections that authenticated before.
import CairnCluster
import CairnCore
import CairnHub
import CairnSessions

/// Logouts and suspensions as `ControlMessage`s (kinds 5 and 6, after `SocialControl`'s).
final class SessionControl: RemoteSessions {
    /// What a session message says (its `kind`).
    enum Kind: UInt8 {
        /// A token of subject was revoked: other and other version are its fingerprint.
        case tokenRevoked = 5
        /// Every session of subject ended: code 1 logged out everywhere, 2 suspended.
        case sessionsEnded = 6
    }

    private let control: ControlChannel

    init(control: ControlChannel) { self.control = control }

    func tokenRevoked(user: Int64, fingerprint: TokenFingerprint) {
        control.publish(
            ControlMessage(
                kind: Kind.tokenRevoked.rawValue, subject: user, other: fingerprint.high, changeVersion: 0,
                otherVersion: fingerprint.low, node: control.node))
    }

    func sessionsEnded(user: Int64, why: SessionEnd) {
        let code: UInt8 = why == .suspended ? 2 : 1
        control.publish(
            ControlMessage(
                kind: Kind.sessionsEnded.rawValue, subject: user, other: 0, changeVersion: 0, code: code,
                node: control.node))
    }

    /// Applies `message` to `hub`; false when it is not one of these kinds, or a code this build does not know.
    static func apply(_ message: ControlMessage, to hub: Hub) -> Bool {
        guard let kind = Kind(rawValue: message.kind) else { return false }
        switch kind {
        case .tokenRevoked:
            hub.remoteTokenRevoked(
                user: message.subject, fingerprint: TokenFingerprint(high: message.other, low: message.otherVersion))
        case .sessionsEnded:
            switch message.code {
            case 1: hub.remoteSessionsEnded(user: message.subject, why: .tokenRevoked)
            case 2: hub.remoteSessionsEnded(user: message.subject, why: .suspended)
            default: return false
            }
        }
        return true
    }
}
