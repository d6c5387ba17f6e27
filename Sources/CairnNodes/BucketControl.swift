// The buckets feature's `RemoteBuckets` port on the control channel (kinds 12 and 13), and the way back: a committed
// change of a bucket through this node is announced by the bucket's id, every item deleted by its id; every other
// node reads the bucket and its items from the shared store and brings its trackers' state for them up to date
// (left-behind alerts, hidden items, trackers unpaired), and forgets the deleted items. No wait for
// acknowledgements: who may see an item is read from the store at each move, so nothing here can leak a position;
// this keeps alerts right. Only with a shared store.
import CairnBuckets
import CairnCluster
import CairnHub
import CairnTrackers
import Logging

/// Kind 12: bucket `id` (the message's subject) changed or was deleted.
struct BucketTouched: ControlPayload, Equatable {
    static let kind = ControlKind.bucketTouched
    var id: Int64

    init(id: Int64) { self.id = id }
    init?(fields message: ControlMessage) { self.init(id: message.subject) }
    func write(to message: inout ControlMessage) { message.subject = id }
    func apply(to hub: Hub, logger: Logger) { hub.trackers.applyRemoteBucketTouched(id) }
}

/// Kind 13: item `id` (the message's subject) was deleted, alone or with its bucket.
struct ItemGone: ControlPayload, Equatable {
    static let kind = ControlKind.itemGone
    var id: Int64

    init(id: Int64) { self.id = id }
    init?(fields message: ControlMessage) { self.init(id: message.subject) }
    func write(to message: inout ControlMessage) { message.subject = id }
    func apply(to hub: Hub, logger: Logger) { hub.trackers.itemsGone([id]) }
}

/// The buckets feature's port: changes committed here, published for the other nodes.
final class BucketControl: RemoteBuckets {
    private let control: ControlChannel

    init(control: ControlChannel) { self.control = control }

    func bucketTouched(_ bucket: Int64) { control.publish(BucketTouched(id: bucket)) }

    func itemsGone(_ items: [Int64]) {
        for item in items { control.publish(ItemGone(id: item)) }
    }
}
