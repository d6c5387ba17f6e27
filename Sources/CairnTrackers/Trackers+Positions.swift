import CairnBuckets
// Where items are, live (seed 002, "find my item"): each item's latest tracker fix in memory and in the tracker layer
// of the spatial index, restored at start from the store (where the ingest committed every fix before answering the
// tracker), and `items.watch`: a connection asks once for the positions of every item its user can view, then gets
// `item.pos` whenever one of them moves, latest wins per item like friends' `pos`.
//
// Who hears a move is asked of `Buckets` at the time of the move (everyone who can view the item's bucket now, or
// only its owners when the item is hidden), then narrowed to those watching; nobody else ever gets an item's
// position. A lookup that an access change overtook (unshare, demotion, privacy, a friendship's end, hiding) is never
// used: `Buckets` reads it again (see `AccessEpochs`), so losing access stops the pushes at once, and the `item.pos`
// still waiting in a connection's latest-wins slot is withdrawn (`HubEvents.itemsWithdrawn`) when access is lost or
// the connection stops watching. Two moves whose lookups finish out of order still send the newest fix. Ghost mode
// hides people, not things: it plays no part here. A deleted item (or the items of a deleted bucket) leaves memory and
// the tracker layer as soon as the deletion is committed, and a fix committed for it (or for a tracker unpaired since)
// that reaches the loop after that is ignored. With several nodes, moves also go to viewers on other nodes and come
// from trackers reporting to other nodes (`Trackers+Remote`).
public import CairnCore
public import CairnGeo
package import CairnLoop
import CairnSpatial

extension Trackers {
    /// Restores items' latest fixes (at start, from the store).
    public func restore(_ positions: [ItemPosition]) {
        for p in positions where (latest[p.item]?.ts ?? .min) <= p.fix.ts { place(p.item, p.fix) }
    }

    /// A tracker's fix was committed (the ingest, brought to the loop): the item moves, and its viewers who watch
    /// items hear it.
    package func moved(_ tracker: TrackerRecord, _ fix: Fix) {
        let item = tracker.item
        guard !unpaired.contains(tracker.id), !deleted.contains(item) else { return }  // gone while on its way
        if let known = latest[item], known.ts > fix.ts { return }
        place(item, fix)
        unverified.remove(item)  // reported here: current
        itemMoved(item, now: clock.now())  // left behind
        guard !watchers.isEmpty || remote != nil else { return }
        buckets.audience(ofItem: item) { audience in
            guard let audience, let newest = self.latest[item] else { return }
            self.publishRemotely(ItemPosition(item: item, fix: newest), tracker: tracker.id, audience: audience)
            var connections: [ConnectionID] = []
            for user in audience.positionTo { if let watching = self.watchers[user] { connections += watching } }
            guard !connections.isEmpty else { return }
            self.notePushed(item, in: audience.item.bucket)
            self.events?.itemMoved(ItemPosition(item: item, fix: newest), to: connections.sorted())
        }
    }

    /// Starts pushing `item.pos` to the caller's connection; answers the current positions of the items the caller
    /// can view (items without a position, and hidden items of buckets the caller does not own, are left out). With
    /// several nodes the connection follows those items' moves made elsewhere, and what this node knows of them is
    /// brought up to date from the shared store first (a move made elsewhere while nobody here followed the item).
    public func watch(_ caller: Caller, _ done: @escaping Outcome<[ItemPosition]>) {
        buckets.viewableItems(caller) { result in
            guard case .success(let found) = result else { return done(result.map { _ in [] }) }
            let visible = found.filter { !$0.item.hidden || $0.role == .owner }.map(\.item)
            let answer = {
                // A connection that closed while its watch was read is not registered (nothing would remove it).
                if self.connectionOpen?(caller.connection) ?? true {
                    self.watchers[caller.user.id, default: []].insert(caller.connection)
                    self.watcherOf[caller.connection] = caller.user.id
                }
                done(
                    .success(
                        visible.compactMap { item in self.latest[item.id].map { ItemPosition(item: item.id, fix: $0) } }
                    ))
            }
            guard self.remote != nil else { return answer() }
            self.follow(found.map(\.item.id), for: caller.connection)  // first, so no move made elsewhere is missed
            self.refresh(visible, then: answer)
        }
    }

    /// Stops pushing `item.pos` to the caller's connection; what is still waiting to go out is withdrawn.
    public func unwatch(_ caller: Caller) { stopWatching(caller.connection, withdraw: true) }

    /// The connection is gone (nothing to withdraw) or its session ended (pending `item.pos` withdrawn).
    package func stopWatching(_ connection: ConnectionID, withdraw: Bool = false) {
        unfollowAll(for: connection)  // also when it closed before its `items.watch` was answered
        guard let user = watcherOf.removeValue(forKey: connection) else { return }
        watchers[user]?.remove(connection)
        if watchers[user]?.isEmpty == true { watchers[user] = nil }
        if withdraw && !pushedIn.isEmpty { events?.itemsWithdrawn(pushedIn.keys.sorted(), from: [connection]) }
    }

    /// `users` lost sight of `bucket` (committed and announced): its items' pending `item.pos` are withdrawn from
    /// their watching connections.
    package func accessLost(bucket: Int64, users: Set<Int64>) {
        guard let items = pushed[bucket] else { return }
        var connections: [ConnectionID] = []
        for user in users { if let watching = watchers[user] { connections += watching } }
        guard !connections.isEmpty else { return }
        events?.itemsWithdrawn(items.sorted(), from: connections.sorted())
    }

    /// The item is hidden now: its pending `item.pos` is withdrawn from everyone watching but its owners.
    func hidden(_ item: Int64, owners: Set<Int64>) {
        guard pushedIn[item] != nil else { return }
        var connections: [ConnectionID] = []
        for (user, watching) in watchers where !owners.contains(user) { connections += watching }
        guard !connections.isEmpty else { return }
        events?.itemsWithdrawn([item], from: connections.sorted())
    }

    func notePushed(_ item: Int64, in bucket: Int64) {
        guard pushedIn[item] == nil else { return }
        pushedIn[item] = bucket
        pushed[bucket, default: []].insert(item)
    }

    /// The item's latest fix, if its tracker has reported.
    public func position(of item: Int64) -> Fix? { latest[item] }

    /// Items whose tracker was last within `radius` metres of `centre` (the tracker layer).
    public func items(within radius: Double, of centre: GeoPoint) -> [Int64] {
        var found: [Int64] = []
        index.forEach(in: .trackers, within: radius, of: centre) { item, _, _ in found.append(item) }
        return found.sorted()
    }

    /// The item's tracker was unpaired: its position is forgotten (the store dropped it too), and so is its
    /// left-behind state (`forgetLeftBehind`).
    func forget(item: Int64) {
        latest[item] = nil
        index.remove(item, from: .trackers)
        forgetLeftBehind(item)
    }

    /// The items were deleted (alone or with their bucket; committed): their positions and alert state go at once,
    /// and a fix for them still on its way is ignored.
    package func itemsGone(_ items: [Int64]) {
        for item in items { if let bucket = alerting[item]?.bucket ?? pushedIn[item] { bucketChangedHere(bucket) } }
        let sent = items.filter { pushedIn[$0] != nil }
        if !sent.isEmpty && !watcherOf.isEmpty {
            events?.itemsWithdrawn(sent.sorted(), from: watcherOf.keys.sorted())
        }
        for item in items {
            deleted.insert(item)
            forget(item: item)
            stopAlerting(item)
            if let bucket = pushedIn.removeValue(forKey: item) {
                pushed[bucket]?.remove(item)
                if pushed[bucket]?.isEmpty == true { pushed[bucket] = nil }
            }
        }
    }

    func place(_ item: Int64, _ fix: Fix) {
        latest[item] = fix
        if let point = GeoPoint(lat: fix.lat, lon: fix.lon) { index.upsert(item, at: point, in: .trackers) }
    }
}
