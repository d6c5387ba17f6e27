// The sessions feature's `RemoteSessions` port on the control channel (kinds 5 and 6), and the way back: a logout
// (the token's fingerprint), a logout everywhere or a suspension committed through this node ends the matching
// sessions on every other node, which apply it through the same paths a local one takes. Fire and forget: the store
// already refuses the token (or the suspended account) on every node; the message closes connections that
// authenticated before.
import CairnCluster
import CairnCore
import CairnHub
import CairnSessions
import Logging

/// Kind 5: a token of `user` was revoked; the message's other and other version carry its fingerprint.
struct TokenRevoked: ControlPayload, Equatable {
    static let kind = ControlKind.tokenRevoked
    var user: Int64
    var fingerprint: TokenFingerprint

    init(user: Int64, fingerprint: TokenFingerprint) {
        self.user = user
        self.fingerprint = fingerprint
    }

    init?(fields message: ControlMessage) {
        self.init(
            user: message.subject, fingerprint: TokenFingerprint(high: message.other, low: message.otherVersion))
    }

    func write(to message: inout ControlMessage) {
        (message.subject, message.other, message.otherVersion) = (user, fingerprint.high, fingerprint.low)
    }

    func apply(to hub: Hub, logger: Logger) {
        hub.sessions.applyRemoteTokenRevoked(user: user, fingerprint: fingerprint)
    }
}

/// Kind 6: every session of `user` ended: code 1 logged out everywhere, 2 suspended.
struct SessionsEnded: ControlPayload, Equatable {
    static let kind = ControlKind.sessionsEnded
    var user: Int64
    /// `.suspended`, or `.tokenRevoked` for a logout everywhere.
    var why: SessionEnd

    init(user: Int64, why: SessionEnd) {
        self.user = user
        self.why = why == .suspended ? .suspended : .tokenRevoked
    }

    init?(fields message: ControlMessage) {
        switch message.code {
        case 1: self.init(user: message.subject, why: .tokenRevoked)
        case 2: self.init(user: message.subject, why: .suspended)
        default: return nil
        }
    }

    func write(to message: inout ControlMessage) {
        message.subject = user
        message.code = why == .suspended ? 2 : 1
    }

    func apply(to hub: Hub, logger: Logger) { hub.sessions.applyRemoteSessionsEnded(user: user, why: why) }
}

/// The sessions feature's port: logouts and suspensions committed here, published for the other nodes.
final class SessionControl: RemoteSessions {
    private let control: ControlChannel

    init(control: ControlChannel) { self.control = control }

    func tokenRevoked(user: Int64, fingerprint: TokenFingerprint) {
        control.publish(TokenRevoked(user: user, fingerprint: fingerprint))
    }

    func sessionsEnded(user: Int64, why: SessionEnd) { control.publish(SessionsEnded(user: user, why: why)) }
}
