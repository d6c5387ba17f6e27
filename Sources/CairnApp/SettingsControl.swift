// The domain's `RemoteSettings` port on the control channel (kind 10), and the way back: a change of admins' settings
// committed through this node is announced with no content; every other node reads the stored settings again and
// puts in force what differs (`Hub.remoteSettingsChanged`). With a shared store only: the store is what the others
// read. Fire and forget, with no wait for acknowledgements: a setting is a limit, not a privacy change, so a node
// that applies it a moment later leaks nothing; one that missed the message reads the settings again when it
// catches up, and every 30 s (ClusterCatchUp).
import CairnAdmin
import CairnCluster
import CairnHub

/// Settings changes as `ControlMessage`s: no ids, no versions (the store holds the values).
final class SettingsControl: RemoteSettings {
    /// The message's kind.
    static let kind: UInt8 = 10

    private let control: ControlChannel

    init(control: ControlChannel) { self.control = control }

    func settingsChanged() {
        control.publish(ControlMessage(kind: Self.kind, subject: 0, other: 0, changeVersion: 0, node: control.node))
    }

    /// Applies `message` to `hub`; false when it is not of this kind.
    static func apply(_ message: ControlMessage, to hub: Hub) -> Bool {
        guard message.kind == kind else { return false }
        hub.remoteSettingsChanged()
        return true
    }
}
