// The domain's `RemotePictures` port on the control channel (kind 11), and the way back: a picture posted through
// this node is announced by id; every other node with connections watching for `picture.new` reads it from the shared
// store and pushes it to those who may see it, as a local post does. Sent only while the channel is ready and never
// kept for later: a picture pushed minutes late would reach whoever stands near it then. A post missed while a node
// was cut off is not pushed there (its pages and search show it). Only with a shared store.
import CairnCluster
import CairnHub
import CairnPictures

/// Picture posts as `ControlMessage`s: subject the picture's id.
final class PictureControl: RemotePictures {
    static let posted: UInt8 = 11

    private let control: ControlChannel

    init(control: ControlChannel) { self.control = control }

    func picturePosted(_ id: Int64) {
        control.publishNow(
            ControlMessage(kind: Self.posted, subject: id, other: 0, changeVersion: 0, node: control.node))
    }

    /// Applies `message` to `hub`; false when it is not this kind.
    static func apply(_ message: ControlMessage, to hub: Hub) -> Bool {
        guard message.kind == posted else { return false }
        hub.remotePicturePosted(message.subject)
        return true
    }
}
