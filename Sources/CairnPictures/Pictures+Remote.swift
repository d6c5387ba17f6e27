// Pictures across nodes. With several nodes on one shared store, a picture posted through one node is committed at
// once, but `picture.new` is pushed by each node to the connections watching there (an area around their user's
// position, or an event). Pictures tells this port after each post; the composition publishes the picture's id, and
// hands what other nodes publish back here: a node with watchers reads the picture as its post announced it (with a
// private event's members) and pushes it to its own watchers by the same rule a local post follows, once however
// often the news is heard. Fire and forget: a post missed while a node's link was down is not pushed there (pages and
// search show it). A single node has no
// port and nothing changes. Loop thread only.
import CairnCore

/// Where pictures posted here go for the other nodes.
public protocol RemotePictures: AnyObject {
    /// A picture was posted here (committed and pushed to this node's watchers).
    func picturePosted(_ id: Int64)
}

extension Pictures {
    /// Another node posted picture `id`: pushed to the watchers here who may see it, read from the store first (only
    /// when someone watches here; a picture gone or hidden meanwhile reaches nobody).
    package func applyRemotePosted(_ id: Int64) {
        guard !watchers.isEmpty, !announcedElsewhere.contains(id) else { return }
        announcedElsewhere.insert(id)  // a message heard twice pushes once
        storeRun(
            { store async throws(DomainError) -> PostedPicture? in
                try await Self.call { try await store.postedPicture(id: id) }
            },
            then: { result in
                guard case .success(let posted?) = result, !posted.record.hidden else { return }
                self.announce(posted)
            })
    }
}
