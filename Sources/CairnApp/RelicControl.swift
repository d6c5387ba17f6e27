// The domain's `RemoteRelics` port on the control channel (kinds 8 and 9), and the way back: a relic created or
// deleted through this node is announced by id; every other node reads a created one from the shared store and
// shows it, and removes a deleted one, through the same paths a local create or delete takes. Fire and forget: a
// node that missed one reads the live relics again when it catches up (ClusterCatchUp).
import CairnCluster
import CairnHub
import CairnRelics

/// Relic creates and deletes as `ControlMessage`s: subject the relic's id.
final class RelicControl: RemoteRelics {
    enum Kind: UInt8 {
        case created = 8
        case deleted = 9
    }

    private let control: ControlChannel

    init(control: ControlChannel) { self.control = control }

    func relicCreated(_ id: Int64) { control.publish(message(.created, id)) }
    func relicDeleted(_ id: Int64) { control.publish(message(.deleted, id)) }

    private func message(_ kind: Kind, _ id: Int64) -> ControlMessage {
        ControlMessage(kind: kind.rawValue, subject: id, other: 0, changeVersion: 0, node: control.node)
    }

    /// Applies `message` to `hub`; false when it is not one of these kinds.
    static func apply(_ message: ControlMessage, to hub: Hub) -> Bool {
        switch Kind(rawValue: message.kind) {
        case .created: hub.remoteRelicCreated(message.subject)
        case .deleted: hub.remoteRelicDeleted(message.subject)
        case nil: return false
        }
        return true
    }
}
