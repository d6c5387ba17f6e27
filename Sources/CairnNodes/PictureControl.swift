// The pictures feature's `RemotePictures` port on the control channel (kind 11), and the way back: a picture posted
// through this node is announced by id; every other node with connections watching for `picture.new` reads it from
// the shared store and pushes it to those who may see it, as a local post does. Sent only while the channel is ready
// and never kept for later: a picture pushed minutes late would reach whoever stands near it then. A post missed
// while a node was cut off is not pushed there (its pages and search show it). Only with a shared store.
import CairnCluster
import CairnHub
import CairnPictures
import Logging

/// Kind 11: picture `id` (the message's subject) was posted.
struct PicturePosted: ControlPayload, Equatable {
    static let kind = ControlKind.picturePosted
    var id: Int64

    init(id: Int64) { self.id = id }
    init?(fields message: ControlMessage) { self.init(id: message.subject) }
    func write(to message: inout ControlMessage) { message.subject = id }
    func apply(to hub: Hub, logger: Logger) { hub.pictures.applyRemotePosted(id) }
}

/// The pictures feature's port: posts made here, published for the other nodes now or never.
final class PictureControl: RemotePictures {
    private let control: ControlChannel

    init(control: ControlChannel) { self.control = control }

    func picturePosted(_ id: Int64) { control.publishNow(PicturePosted(id: id).message(from: control.node)) }
}
