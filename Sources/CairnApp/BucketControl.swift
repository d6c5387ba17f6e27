import CairnBuckets
// The domain's `RemoteBuckets` port on the control channel (kinds 12 and 13), and the way back: a committed change of
// a bucket through this node is announced by the bucket's id, every item deleted by its id; every other node reads the
// bucket and its items from the shared store and brings its trackers' state for them up to date (left-behind alerts,
// hidden items, trackers unpaired), and forgets the deleted items. No wait for acknowledgements: who may see an item
// is read from the store at each move, so nothing here can leak a position; this keeps alerts right. Only with a
// shared store.
import CairnCluster
import CairnHub

/// Bucket changes as `ControlMessage`s: subject the bucket's id.
final class BucketControl: RemoteBuckets {
    static let touched: UInt8 = 12
    static let itemGone: UInt8 = 13

    private let control: ControlChannel

    init(control: ControlChannel) { self.control = control }

    func bucketTouched(_ bucket: Int64) {
        control.publish(
            ControlMessage(kind: Self.touched, subject: bucket, other: 0, changeVersion: 0, node: control.node))
    }

    func itemsGone(_ items: [Int64]) {
        for item in items {
            control.publish(
                ControlMessage(kind: Self.itemGone, subject: item, other: 0, changeVersion: 0, node: control.node))
        }
    }

    /// Applies `message` to `hub`; false when it is not one of these kinds.
    static func apply(_ message: ControlMessage, to hub: Hub) -> Bool {
        switch message.kind {
        case touched: hub.remoteBucketTouched(message.subject)
        case itemGone: hub.remoteItemsGone([message.subject])
        default: return false
        }
        return true
    }
}
