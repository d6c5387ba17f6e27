// Asking the owner's node for a position (control kind 7). When a friendship begins with an owner connected
// elsewhere, this node starts following the owner for its viewer here; the owner's node shows the position at
// once, usually before this node's SUBSCRIBE has reached Redis, and that message is lost for it. So once Redis has
// confirmed this node's subscriptions (`RedisLink.afterSubscriptions`), it asks on the control channel, and the
// node where the owner is connected answers on the owner's channel at the viewer's level (the live map decides, as
// for an arrival). Fire and forget: a lost ask costs the position until the owner's next move.
import CairnCluster
import CairnHub
import CairnLiveMap
import Logging

/// Kind 7: the viewer's node asks for `owner`'s (subject) current position for `viewer` (other).
struct PositionAsked: ControlPayload, Equatable {
    static let kind = ControlKind.positionAsked
    var owner: Int64
    var viewer: Int64

    init(owner: Int64, viewer: Int64) {
        self.owner = owner
        self.viewer = viewer
    }

    init?(fields message: ControlMessage) { self.init(owner: message.subject, viewer: message.other) }

    func write(to message: inout ControlMessage) { (message.subject, message.other) = (owner, viewer) }

    /// Sent at the viewer's level when the owner is connected here and they are friends.
    func apply(to hub: Hub, logger: Logger) { hub.liveMap.remoteViewerAsked(owner: owner, viewer: viewer) }
}
