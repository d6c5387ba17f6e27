// The social feature's `RemoteSocial` port on the control channel (kinds 1 to 4), and the way back: friendships,
// requests and sharing rules committed here go to every other node, which applies them through the same paths as a
// local change (`Social+Remote`). An unfriend and a hide wait for every node where the owner may be connected to
// acknowledge them (answered once each applied it); the others are fire and forget.
import CairnCluster
import CairnCore
import CairnHub
import CairnSocial
import Logging

/// Kind 1: `a` and `b` became friends at `version`: `a` accepted `b`'s request (code 0), or their requests crossed
/// (code 1: both are told the other accepted). Subject `a`, other `b`.
struct FriendshipBegan: ControlPayload, Equatable {
    static let kind = ControlKind.friendshipBegan
    var a: Int64
    var b: Int64
    var version: Int64
    var crossed: Bool

    init(a: Int64, b: Int64, version: Int64, crossed: Bool) {
        (self.a, self.b, self.version, self.crossed) = (a, b, version, crossed)
    }

    init?(fields message: ControlMessage) {
        guard message.code <= 1 else { return nil }
        self.init(a: message.subject, b: message.other, version: message.changeVersion, crossed: message.code == 1)
    }

    func write(to message: inout ControlMessage) {
        (message.subject, message.other, message.changeVersion) = (a, b, version)
        message.code = crossed ? 1 : 0
    }

    func apply(to hub: Hub, logger: Logger) {
        hub.social.applyRemoteFriendshipBegan(a, b, version: version, crossed: crossed)
    }
}

/// Kind 2: `a` removed `b`; the rules both ways were reset at `versionAB` (a → b, the message's version) and
/// `versionBA` (its other version).
struct FriendshipEnded: ControlPayload, Equatable {
    static let kind = ControlKind.friendshipEnded
    var a: Int64
    var b: Int64
    var versionAB: Int64
    var versionBA: Int64

    init(a: Int64, b: Int64, versionAB: Int64, versionBA: Int64) {
        (self.a, self.b, self.versionAB, self.versionBA) = (a, b, versionAB, versionBA)
    }

    init?(fields message: ControlMessage) {
        self.init(
            a: message.subject, b: message.other, versionAB: message.changeVersion, versionBA: message.otherVersion)
    }

    func write(to message: inout ControlMessage) {
        (message.subject, message.other) = (a, b)
        (message.changeVersion, message.otherVersion) = (versionAB, versionBA)
    }

    func apply(to hub: Hub, logger: Logger) {
        hub.social.applyRemoteFriendshipEnded(a, b, versionAB: versionAB, versionBA: versionBA)
    }
}

/// Kind 3: `from` asked `to` (code 1) or the request went (code 0), at `version`.
struct FriendRequest: ControlPayload, Equatable {
    static let kind = ControlKind.friendRequest
    var from: Int64
    var to: Int64
    var pending: Bool
    var version: Int64

    init(from: Int64, to: Int64, pending: Bool, version: Int64) {
        (self.from, self.to, self.pending, self.version) = (from, to, pending, version)
    }

    init?(fields message: ControlMessage) {
        guard message.code <= 1 else { return nil }
        self.init(from: message.subject, to: message.other, pending: message.code == 1, version: message.changeVersion)
    }

    func write(to message: inout ControlMessage) {
        (message.subject, message.other, message.changeVersion) = (from, to, version)
        message.code = pending ? 1 : 0
    }

    func apply(to hub: Hub, logger: Logger) {
        hub.social.applyRemoteRequest(from: from, to: to, pending: pending, version: version)
    }
}

/// Kind 4: `owner`'s rule for `viewer` (nil, 0 on the wire: the pause) is `level` (code 0 the default, 1 precise,
/// 2 approximate, 3 hidden) until `until` (the message's time), at `version`.
struct ShareRuleChanged: ControlPayload, Equatable {
    static let kind = ControlKind.shareRule
    var owner: Int64
    var viewer: Int64?
    var level: ShareLevel?
    var until: Int64?
    var version: Int64

    /// The levels by their code.
    private static let levels: [ShareLevel?] = [nil, .precise, .approximate, .hidden]

    init(owner: Int64, viewer: Int64?, level: ShareLevel?, until: Int64?, version: Int64) {
        (self.owner, self.viewer, self.level, self.until, self.version) = (owner, viewer, level, until, version)
    }

    init?(fields message: ControlMessage) {
        guard Int(message.code) < Self.levels.count else { return nil }
        self.init(
            owner: message.subject, viewer: message.other == 0 ? nil : message.other,
            level: Self.levels[Int(message.code)], until: message.time, version: message.changeVersion)
    }

    func write(to message: inout ControlMessage) {
        (message.subject, message.other, message.changeVersion) = (owner, viewer ?? 0, version)
        message.code = UInt8(Self.levels.firstIndex(of: level) ?? 0)
        message.time = until
    }

    func apply(to hub: Hub, logger: Logger) {
        hub.social.applyRemoteRule(owner: owner, viewer: viewer, level: level, until: until, version: version)
    }
}

/// The social feature's port: what is committed here, published for the other nodes.
final class SocialControl: RemoteSocial {
    private let control: ControlChannel
    private let presence: ClusterPresence

    init(control: ControlChannel, presence: ClusterPresence) {
        self.control = control
        self.presence = presence
    }

    func friendshipBegan(_ a: Int64, _ b: Int64, version: Int64, crossed: Bool) {
        control.publish(FriendshipBegan(a: a, b: b, version: version, crossed: crossed))
    }

    func friendshipEnded(
        _ a: Int64, _ b: Int64, versionAB: Int64, versionBA: Int64, confirmed: @escaping (Bool) -> Void
    ) {
        publishAwaiting(FriendshipEnded(a: a, b: b, versionAB: versionAB, versionBA: versionBA), confirmed)
    }

    func requestChanged(from: Int64, to: Int64, pending: Bool, version: Int64) {
        control.publish(FriendRequest(from: from, to: to, pending: pending, version: version))
    }

    func ruleChanged(
        owner: Int64, viewer: Int64?, level: ShareLevel?, until: Int64?, version: Int64,
        confirmed: ((Bool) -> Void)?
    ) {
        let rule = ShareRuleChanged(owner: owner, viewer: viewer, level: level, until: until, version: version)
        guard let confirmed else { return control.publish(rule) }
        publishAwaiting(rule, confirmed)
    }

    /// Publishes and waits for every other node that may be serving (hides are rare; a node where the owner has
    /// just connected, or that the mirror has not listed yet, is waited for too); past the deadline, only for those
    /// still alive in presence.
    private func publishAwaiting(_ payload: some ControlPayload, _ done: @escaping (Bool) -> Void) {
        let presence = self.presence
        // Nodes that vanished without leaving in the last ten minutes are named too: none answers, so the wait
        // lasts at least the deadline, which is what a cut-off node's fence counts on (ClusterCatchUp).
        let grace = Self.expiredGraceMs
        control.publish(
            payload.message(from: control.node),
            awaiting: { presence.otherNodes(graceMs: ClusterPresence.keptAfterExpiryMs) },
            listed: { presence.mayBeServing($0, graceMs: grace) }, then: done)
    }

    /// How long after its presence entry expired a node is still waited for: a node cut off from Redis reads the
    /// store every second, so by then it has applied the change by itself (the read must take under a second).
    static let expiredGraceMs: Int64 = 2000
}
