// Asking the owner's node for a position (control kind 7). When a friendship begins with an owner connected
// elsewhere, this node starts following the owner for its viewer here; the owner's node shows the position at
// once, usually before this node's SUBSCRIBE has reached Redis, and that message is lost for it. So once Redis has
// confirmed this node's subscriptions (`RedisLink.afterSubscriptions`), it asks on the control channel, and the
// node where the owner is connected answers on the owner's channel at the viewer's level (the domain decides, as
// for an arrival). Fire and forget: a lost ask costs the position until the owner's next move.
import CairnCluster
import CairnHub

/// The ask as a `ControlMessage`: subject the owner, other the viewer.
enum PositionAsk {
    static let kind: UInt8 = 7

    static func message(owner: Int64, viewer: Int64, node: String) -> ControlMessage {
        ControlMessage(kind: kind, subject: owner, other: viewer, changeVersion: 0, node: node)
    }

    /// Answers an ask from another node; false when `message` is not one.
    static func apply(_ message: ControlMessage, to hub: Hub) -> Bool {
        guard message.kind == kind else { return false }
        hub.remoteViewerAsked(owner: message.subject, viewer: message.other)
        return true
    }
}
