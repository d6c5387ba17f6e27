// The relics feature's `RemoteRelics` port on the control channel (kinds 8 and 9), and the way back: a relic created
// or deleted through this node is announced by id; every other node reads a created one from the shared store and
// shows it, and removes a deleted one, through the same paths a local create or delete takes. Fire and forget: a
// node that missed one reads the live relics again when it catches up (ClusterCatchUp).
import CairnCluster
import CairnHub
import CairnRelics
import Logging

/// Kind 8: relic `id` (the message's subject) was created.
struct RelicCreated: ControlPayload, Equatable {
    static let kind = ControlKind.relicCreated
    var id: Int64

    init(id: Int64) { self.id = id }
    init?(fields message: ControlMessage) { self.init(id: message.subject) }
    func write(to message: inout ControlMessage) { message.subject = id }
    func apply(to hub: Hub, logger: Logger) { hub.relics.applyRemoteCreated(id) }
}

/// Kind 9: relic `id` (the message's subject) was deleted.
struct RelicDeleted: ControlPayload, Equatable {
    static let kind = ControlKind.relicDeleted
    var id: Int64

    init(id: Int64) { self.id = id }
    init?(fields message: ControlMessage) { self.init(id: message.subject) }
    func write(to message: inout ControlMessage) { message.subject = id }
    func apply(to hub: Hub, logger: Logger) { hub.relics.applyRemoteDeleted(id) }
}

/// The relics feature's port: creates and deletes committed here, published for the other nodes.
final class RelicControl: RemoteRelics {
    private let control: ControlChannel

    init(control: ControlChannel) { self.control = control }

    func relicCreated(_ id: Int64) { control.publish(RelicCreated(id: id)) }
    func relicDeleted(_ id: Int64) { control.publish(RelicDeleted(id: id)) }
}
