// Left behind, live (seed 002): which items have `alert` on and who owns them, kept in memory (restored at start,
// changed by the hooks `Buckets` fires after a commit: an item's flags, a bucket's owners, items gone), and the rule
// (`LeftBehind`) run for each (item, owner) pair whenever either moves and, for pairs waiting out the grace time, on
// the hub's tick. An owner is evaluated only while the live map knows where they are. Events go to every connection of
// that owner alone: `item.left_behind` with the item's position and the distance, `item.reunited` when back.
//
// An alerted item's owners are written only when its alert starts, by a bucket's owners changing, and at restore: an
// item's own change only turns the alert on or off, so an owner removal announced while the item's write was in
// flight is never undone by it. A pair goes quietly (no `item.reunited`) when its owner stops owning the item, the
// alert is turned off, or the tracker is unpaired: there is nothing to be reunited with any more.
public import CairnBuckets
import CairnCore
import CairnGeo

/// One item and one of its owners.
struct ItemOwner: Hashable {
    var item: Int64
    var owner: Int64
}

extension Trackers {
    /// Restores the items with `alert` on (at start, from the store).
    public func restore(alerts: [ItemAlertRecord]) { for record in alerts { startAlerting(record) } }

    /// An item was changed (committed): alerts start or stop with its `alert` flag, and a newly alerted item is
    /// looked at at once.
    package func itemChanged(_ item: ItemRecord, owners: Set<Int64>) {
        bucketChangedHere(item.bucket)
        if item.hidden { hidden(item.id, owners: owners) }  // its pending `item.pos` to viewers goes
        guard item.alert else { return stopAlerting(item.id) }
        guard alerting[item.id] == nil else { return }  // already on: its owners are kept by `ownersChanged`
        startAlerting(ItemAlertRecord(item: item.id, bucket: item.bucket, owners: owners))
        itemMoved(item.id, now: clock.now())
    }

    /// A bucket's owners changed (committed), or the bucket is gone (nil).
    package func ownersChanged(bucket: Int64, owners: Set<Int64>?) {
        bucketChangedHere(bucket)
        guard let items = alertsIn[bucket] else { return }
        for item in items.sorted() {
            if let owners {
                startAlerting(ItemAlertRecord(item: item, bucket: bucket, owners: owners))
            } else {
                stopAlerting(item)
            }
        }
    }

    /// The item's tracker was unpaired: its pairs go quietly (pending ones would never fire, and an alerted owner
    /// cannot be reunited with a position that is gone).
    func forgetLeftBehind(_ item: Int64) {
        guard let record = alerting[item] else { return }
        for owner in record.owners { clearPair(ItemOwner(item: item, owner: owner)) }
    }

    /// Accounts are gone (the guest purge): they are no longer owners of any alerted item.
    package func ownersGone(_ users: [Int64]) {
        for user in users {
            guard let items = alertsOf[user] else { continue }
            for item in items.sorted() {
                guard var record = alerting[item] else { continue }
                record.owners.remove(user)
                startAlerting(record)
            }
        }
    }

    /// An owner moved: each of their alerted items is looked at.
    package func ownerMoved(_ owner: Int64, now: Int64) {
        guard let items = alertsOf[owner] else { return }
        for item in items.sorted() { evaluate(item, owner, now: now) }
    }

    /// An item moved: each of its owners is looked at.
    func itemMoved(_ item: Int64, now: Int64) {
        guard let record = alerting[item] else { return }
        for owner in record.owners.sorted() { evaluate(item, owner, now: now) }
    }

    /// The hub's tick: pairs waiting out the grace time are looked at again.
    package func tickLeftBehind(now: Int64) {
        guard !waiting.isEmpty else { return }
        for pair in waiting.sorted(by: { ($0.item, $0.owner) < ($1.item, $1.owner) }) {
            evaluate(pair.item, pair.owner, now: now)
        }
    }

    /// Pairs waiting out the grace time or alerted (tests, figures).
    var leftBehindPairs: Int { leftBehind.count }

    private func clearPair(_ pair: ItemOwner) {
        leftBehind[pair] = nil
        waiting.remove(pair)
    }

    func startAlerting(_ record: ItemAlertRecord) {
        let dropped = alerting[record.item].map { $0.owners.subtracting(record.owners) } ?? []
        for owner in dropped { dropPair(record.item, owner) }
        alerting[record.item] = record
        for owner in dropped { syncAlertFollow(record.item, owner: owner) }  // no longer an owner: let go
        alertsIn[record.bucket, default: []].insert(record.item)
        for owner in record.owners {
            alertsOf[owner, default: []].insert(record.item)
            syncAlertFollow(record.item, owner: owner)
        }
    }

    func stopAlerting(_ item: Int64) {
        guard let old = alerting.removeValue(forKey: item) else { return }
        alertsIn[old.bucket]?.remove(item)
        if alertsIn[old.bucket]?.isEmpty == true { alertsIn[old.bucket] = nil }
        for owner in old.owners { dropPair(item, owner) }
    }

    private func dropPair(_ item: Int64, _ owner: Int64) {
        clearPair(ItemOwner(item: item, owner: owner))
        alertsOf[owner]?.remove(item)
        if alertsOf[owner]?.isEmpty == true { alertsOf[owner] = nil }
        syncAlertFollow(item, owner: owner)  // after `alerting` changed: lets go of what is no longer wanted
    }

    private func evaluate(_ item: Int64, _ owner: Int64, now: Int64) {
        guard !unverified.contains(item), let fix = latest[item], let there = GeoPoint(lat: fix.lat, lon: fix.lon),
            let mine = ownerFix?(owner), let here = GeoPoint(lat: mine.lat, lon: mine.lon)
        else { return }
        let pair = ItemOwner(item: item, owner: owner)
        var state = leftBehind[pair] ?? LeftBehind()
        let verdict = state.evaluate(
            gap: here.distance(to: there), slack: (fix.acc ?? 0) + (mine.acc ?? 0),
            sheltered: shelters?(owner, there) ?? false, now: now, distance: leftBehindDistance,
            graceMs: leftBehindGraceMs)
        leftBehind[pair] = state.isIdle ? nil : state
        if state.farSince != nil { waiting.insert(pair) } else { waiting.remove(pair) }
        switch verdict {
        case .leftBehind(let distance):
            events?.publish(
                .itemLeftBehind(item: item, distance: distance.rounded(), lat: fix.lat, lon: fix.lon),
                toUsers: [owner], excluding: nil)
        case .reunited:
            events?.publish(.itemReunited(item: item), toUsers: [owner], excluding: nil)
        case nil:
            break
        }
    }
}
