// Where items are, live (seed 002, "find my item"): each item's latest tracker fix in memory and in the tracker layer
// of the spatial index, restored at start from the store (where the ingest committed every fix before answering the
// tracker), and `items.watch`: a connection asks once for the positions of every item its user can view, then gets
// `item.pos` whenever one of them moves, latest wins per item like friends' `pos`.
//
// Who hears a move is asked of `Buckets` at the time of the move (everyone who can view the item's bucket now, or
// only its owners when the item is hidden), then narrowed to those watching; nobody else ever gets an item's
// position, and losing access to a bucket stops its items' pushes with the next move. Two moves whose lookups finish
// out of order still send the newest fix. Ghost mode hides people, not things: it plays no part here. A deleted item
// (or the items of a deleted bucket) leaves memory and the tracker layer as soon as the deletion is committed.
import CairnGeo
import CairnLoop
import CairnSpatial

extension Trackers {
    /// Restores items' latest fixes (at start, from the store).
    public func restore(_ positions: [ItemPosition]) {
        for p in positions where (latest[p.item]?.ts ?? .min) <= p.fix.ts { place(p.item, p.fix) }
    }

    /// A tracker's fix was committed (the ingest, brought to the loop): the item moves, and its viewers who watch
    /// items hear it.
    func moved(_ tracker: TrackerRecord, _ fix: Fix) {
        let item = tracker.item
        if let known = latest[item], known.ts > fix.ts { return }
        place(item, fix)
        itemMoved(item, now: clock.now())  // left behind
        guard !watchers.isEmpty else { return }
        buckets.audience(ofItem: item) { audience in
            guard let audience, let newest = self.latest[item] else { return }
            var connections: [ConnectionID] = []
            for user in audience.positionTo { if let watching = self.watchers[user] { connections += watching } }
            guard !connections.isEmpty else { return }
            self.events?.itemMoved(ItemPosition(item: item, fix: newest), to: connections.sorted())
        }
    }

    /// Starts pushing `item.pos` to the caller's connection; answers the current positions of the items the caller
    /// can view (items without a position, and hidden items of buckets the caller does not own, are left out).
    public func watch(_ caller: Caller, _ done: @escaping Outcome<[ItemPosition]>) {
        buckets.viewableItems(caller) { result in
            done(
                result.map { items in
                    self.watchers[caller.user.id, default: []].insert(caller.connection)
                    self.watcherOf[caller.connection] = caller.user.id
                    return items.compactMap { found in
                        guard !found.item.hidden || found.role == .owner else { return nil }
                        return self.latest[found.item.id].map { ItemPosition(item: found.item.id, fix: $0) }
                    }
                })
        }
    }

    /// Stops pushing `item.pos` to the caller's connection.
    public func unwatch(_ caller: Caller) { stopWatching(caller.connection) }

    /// The connection is gone or its session ended.
    func stopWatching(_ connection: ConnectionID) {
        guard let user = watcherOf.removeValue(forKey: connection) else { return }
        watchers[user]?.remove(connection)
        if watchers[user]?.isEmpty == true { watchers[user] = nil }
    }

    /// The item's latest fix, if its tracker has reported.
    public func position(of item: Int64) -> Fix? { latest[item] }

    /// Items whose tracker was last within `radius` metres of `centre` (the tracker layer).
    public func items(within radius: Double, of centre: GeoPoint) -> [Int64] {
        var found: [Int64] = []
        index.forEach(in: .trackers, within: radius, of: centre) { item, _, _ in found.append(item) }
        return found.sorted()
    }

    /// The item's tracker was unpaired: its position is forgotten (the store dropped it too).
    func forget(item: Int64) {
        latest[item] = nil
        index.remove(item, from: .trackers)
    }

    /// The items were deleted (alone or with their bucket; committed): their positions and alert state go at once.
    func itemsGone(_ items: [Int64]) {
        for item in items {
            forget(item: item)
            stopAlerting(item)
        }
    }

    private func place(_ item: Int64, _ fix: Fix) {
        latest[item] = fix
        if let point = GeoPoint(lat: fix.lat, lon: fix.lon) { index.upsert(item, at: point, in: .trackers) }
    }
}
