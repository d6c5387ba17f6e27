// The administration feature's `RemoteSettings` port on the control channel (kind 10), and the way back: a change of
// admins' settings committed through this node is announced with no content; every other node reads the stored
// settings again and puts in force what differs (`AdminSettings.reread`). With a shared store only: the store is what
// the others read. Fire and forget, with no wait for acknowledgements: a setting is a limit, not a privacy change,
// so a node that applies it a moment later leaks nothing; one that missed the message reads the settings again when
// it catches up, and every 30 s (ClusterCatchUp).
import CairnAdmin
import CairnCluster
import CairnCore
import CairnHub
import Logging

/// Kind 10: admins' settings changed (no ids, no versions: the store holds the values).
struct SettingsChanged: ControlPayload, Equatable {
    static let kind = ControlKind.settingsChanged

    init() {}
    init?(fields message: ControlMessage) {}
    func write(to message: inout ControlMessage) {}

    /// The stored values are read again and what differs from memory is put in force. A failed read leaves memory
    /// as it was (logged; the next catch-up read reads again).
    func apply(to hub: Hub, logger: Logger) {
        hub.settings.reread { result in
            if case .failure(let error) = result {
                logger.warning("settings changed on another node could not be read: \(error.message)")
            }
        }
    }
}

/// The administration feature's port: settings changed here, announced to the other nodes.
final class SettingsControl: RemoteSettings {
    private let control: ControlChannel

    init(control: ControlChannel) { self.control = control }

    func settingsChanged() { control.publish(SettingsChanged()) }
}
