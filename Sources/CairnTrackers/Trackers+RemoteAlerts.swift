// Left-behind alerts with several nodes. An alert is worked out where the owner's position is known: the node the
// owner reports to. That node must therefore hear the moves of the owner's alerted items wherever their trackers
// report, and must know which items have `alert` on whatever node the change went through:
//
// - While an owner is connected here, this node follows (`RemoteItems.follow`) each of the owner's alerted items, and
//   a move heard from another node is looked at for left-behind as a local move is (`remoteMoved`). The moving node
//   lists the owners among the item's audience online elsewhere, as it does for any viewer.
// - An item's position in memory may be old when its following starts (moves made elsewhere while nobody here
//   followed it), and judging an owner against it could raise a false alarm: until the tracker's latest fix has been
//   read from the shared store, the item is not looked at (`unverified`).
// - A change of a bucket committed through another node (`RemoteBuckets`: an item's alert or hidden flag, an item
//   deleted, a tracker unpaired, the owners, the bucket deleted) is read again from the store here and applied to
//   the same state the local hooks keep (`applyRemoteBucketTouched`). One read per bucket at a time; a change heard,
//   or made here, during a read is read again after it, so an older read never undoes a newer change. A node that
//   may have missed such a message reads every alerted item again (`resyncAlerts`, with the catch-up reads).
//
// A single node has no `remote`: none of this runs.
import CairnBuckets
package import CairnCore
import Logging

extension Trackers {
    /// True when this node judges `owner`'s left-behind alerts: it knows where they are (they report here).
    public func judgesAlerts(for owner: Int64) -> Bool { ownerFix?(owner) != nil }

    /// `user`'s first connection here opened (true) or the last one closed (false): their alerted items are
    /// followed while they are here.
    package func ownerPresenceChanged(_ user: Int64, online: Bool) {
        guard remote != nil, let items = alertsOf[user] else { return }
        for item in items.sorted() { syncAlertFollow(item, owner: user) }
    }

    /// Follows `item` for `owner` when it is alerted for them and they are connected here, and lets go otherwise.
    func syncAlertFollow(_ item: Int64, owner: Int64) {
        guard let remote else { return }
        let pair = ItemOwner(item: item, owner: owner)
        let wanted = (alerting[item]?.owners.contains(owner) ?? false) && (onlineHere?(owner) ?? false)
        if wanted, alertFollowed.insert(pair).inserted {
            remote.follow(item)
            alertFollowStarted(item)
        } else if !wanted, alertFollowed.remove(pair) != nil {
            remote.unfollow(item)
        }
    }

    /// Following `item` for an alert began: until the tracker's latest fix is read from the store, the item's
    /// position here may be old and is not judged.
    private func alertFollowStarted(_ item: Int64) {
        unverified.insert(item)
        buckets.item(item) { result in
            guard case .success(let record?) = result else {
                // Gone, or the read failed: not judged until a move is heard (which verifies it), or the next
                // following reads again.
                return
            }
            self.refresh([record]) {
                guard self.unverified.remove(item) != nil else { return }
                self.itemMoved(item, now: self.clock.now())
            }
        }
    }

    /// Another node committed a change of `bucket`: the bucket and its items are read from the store and what the
    /// trackers keep for them here is brought up to date.
    package func applyRemoteBucketTouched(_ bucket: Int64) {
        guard remote != nil else { return }
        if bucketReads[bucket] != nil {
            bucketReads[bucket] = true
            return
        }
        bucketReads[bucket] = false
        buckets.contents(of: bucket) { result in
            let again = self.bucketReads.removeValue(forKey: bucket) ?? false
            if again { return self.applyRemoteBucketTouched(bucket) }  // changed during the read: read again
            switch result {
            case .failure(let error):
                hubLogger.warning("bucket \(bucket) changed on another node and could not be read: \(error)")
            case .success(let found):
                self.apply(bucket, found)
            }
        }
    }

    /// A local change of `bucket` was committed (or one from elsewhere applied): a read of it in flight is stale, and
    /// so is a catch-up read of every alert.
    func bucketChangedHere(_ bucket: Int64) {
        alertChanges &+= 1
        if bucketReads[bucket] != nil { bucketReads[bucket] = true }
    }

    /// Reads every alerted item and its owners from the store and applies the differences: the backstop for a bucket
    /// change whose message this node missed (`ClusterCatchUp`). A read that a change of alert state overtook is not
    /// applied (the next one is). `done` learns how many items' alert state changed.
    package func resyncAlerts(_ done: @escaping (Result<Int, DomainError>) -> Void) {
        guard remote != nil else { return done(.success(0)) }
        let mark = alertChanges
        buckets.readItemAlerts(
            { result in
                guard case .success(let records) = result else { return done(result.map { _ in 0 }) }
                guard self.alertChanges == mark else { return done(.success(0)) }
                let stored = Set(records.map(\.item))
                var changed = 0
                for item in self.alerting.keys.sorted() where !stored.contains(item) {
                    self.stopAlerting(item)
                    changed += 1
                }
                for record in records where self.alerting[record.item] != record {
                    let started = self.alerting[record.item] == nil
                    self.startAlerting(record)
                    if started { self.itemMoved(record.item, now: self.clock.now()) }
                    changed += 1
                }
                done(.success(changed))
            })
    }

    private func apply(_ bucket: Int64, _ found: (BucketRecord, [ItemRecord])?) {
        let known = (alertsIn[bucket] ?? []).union(pushed[bucket] ?? [])
        guard let (record, items) = found else {
            if !known.isEmpty { itemsGone(known.sorted()) }
            return
        }
        let present = Set(items.map(\.id))
        let gone = known.subtracting(present)
        if !gone.isEmpty { itemsGone(gone.sorted()) }
        let owners = Set(record.owners)
        ownersChanged(bucket: bucket, owners: owners)
        for item in items {
            if item.tracker == nil, latest[item.id] != nil { forget(item: item.id) }  // unpaired elsewhere
            itemChanged(item, owners: owners)
        }
    }
}
