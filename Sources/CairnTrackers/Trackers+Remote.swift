// The trackers' side of several nodes (`RemoteItems`): which items this node's watchers follow, what a move made
// here tells viewers on other nodes, and what a move made elsewhere does here. A move heard from another node
// updates this node's memory of the item (so `items.watch` answers it), then reaches only viewers who were listed by
// the moving node, watch items here, and are in the item's audience as this node reads it now — the same lookup,
// with the same stale-read guard (`AccessEpochs`), as a local move, so a loss of access committed here stops the
// pushes at once and what went out is withdrawn as for a local move. What a watching connection follows is read
// again whenever its user is told a bucket changed or went (here, or on another node: `bucketNewsHeard`), so a
// bucket shared, an item added or a tracker paired after `items.watch` is followed from then on, and access lost is
// let go. A single node has no `remote`: none of this runs.
import CairnBuckets
package import CairnCore
import CairnLoop
import Logging

extension Trackers {
    /// A move made here: the audience members online on other nodes, listed once to the port.
    func publishRemotely(_ position: ItemPosition, tracker: Int64, audience: ItemAudience) {
        guard let remote, let onlineElsewhere else { return }
        let elsewhere = audience.positionTo.filter(onlineElsewhere).sorted()
        guard !elsewhere.isEmpty else { return }
        remote.itemMoved(position, tracker: tracker, to: elsewhere)
    }

    /// `connection` watches items now, `items` being those its user may view: follow them (after the new ones are
    /// followed, what it followed before is let go, so a second `items.watch` does not unsubscribe and subscribe).
    func follow(_ items: [Int64], for connection: ConnectionID) {
        // A connection that closed while its watch was read follows nothing (its close let go of all it had).
        guard let remote, connectionOpen?(connection) ?? true else { return }
        let wanted = Array(Set(items)).sorted()
        for item in wanted { remote.follow(item) }
        let before = following.updateValue(wanted, forKey: connection) ?? []
        for item in before { remote.unfollow(item) }
        if wanted.isEmpty { following[connection] = nil }
    }

    /// `connection` no longer watches items: what it followed is let go.
    func unfollowAll(for connection: ConnectionID) {
        guard let items = following.removeValue(forKey: connection) else { return }
        for item in items { remote?.unfollow(item) }
    }

    /// Another node told `users` (connected here) that a bucket they view changed, or that they lost sight of bucket
    /// `lost`: that bucket's items' pending positions are withdrawn from their watching connections here, and the
    /// items those connections follow are read again.
    package func bucketNewsHeard(_ users: [Int64], lost: Int64? = nil) {
        if let lost { accessLost(bucket: lost, users: Set(users)) }
        viewsChanged(users)
    }

    /// Bucket news may have been missed: the items every watching connection here follows are read again.
    package func refollowWatchers() { viewsChanged(Array(watchers.keys)) }

    /// `users` were told a bucket they view changed or went: the items their watching connections here follow are
    /// read again (one read per user at a time; a change heard during a read is read once more after it).
    package func viewsChanged(_ users: [Int64]) {
        guard remote != nil else { return }
        for user in Set(users).sorted() where watchers[user] != nil {
            if refollowing[user] != nil {
                refollowing[user] = true
                continue
            }
            refollowing[user] = false
            buckets.viewableItems(of: user) { result in
                let again = self.refollowing.removeValue(forKey: user) ?? false
                // A failed read leaves what is followed as it is; the next change, or `items.watch`, reads again.
                if case .success(let found) = result, let watching = self.watchers[user] {
                    let items = found.map(\.item.id)
                    for connection in watching.sorted() { self.follow(items, for: connection) }
                }
                if again { self.viewsChanged([user]) }
            }
        }
    }

    /// Items followed for `connection` (tests).
    func followed(by connection: ConnectionID) -> [Int64] { following[connection] ?? [] }

    /// Another node committed `position` for the item (reported by `tracker`) and listed `viewers` (its audience
    /// members online elsewhere): this node's memory of the item is updated when the fix is newer, and the listed
    /// viewers watching here who may still see the item get `item.pos`, latest wins as for a local move.
    package func remoteMoved(_ position: ItemPosition, tracker: Int64, viewers: [Int64]) {
        let item = position.item
        guard !unpaired.contains(tracker), !deleted.contains(item) else { return }  // gone here meanwhile
        if let known = latest[item], known.ts > position.fix.ts { return }  // a newer fix was heard already
        place(item, position.fix)
        unverified.remove(item)  // the item's latest fix: current
        itemMoved(item, now: clock.now())  // left behind, for owners connected here (`Trackers+RemoteAlerts`)
        let listed = Set(viewers.filter { watchers[$0] != nil })
        guard !listed.isEmpty else { return }
        buckets.audience(ofItem: item) { audience in
            guard let audience, let newest = self.latest[item], newest.ts == position.fix.ts else { return }
            var connections: [ConnectionID] = []
            for user in listed where audience.positionTo.contains(user) {
                if let watching = self.watchers[user] { connections += watching }
            }
            guard !connections.isEmpty else { return }
            self.notePushed(item, in: audience.item.bucket)
            self.events?.itemMoved(ItemPosition(item: item, fix: newest), to: connections.sorted())
        }
    }

    /// Reads the latest fixes of `items`' trackers from the store and keeps those newer than this node's (a read
    /// that fails leaves memory as it is), then runs `then` on the loop.
    func refresh(_ items: [ItemRecord], then: @escaping () -> Void) {
        let trackers = items.compactMap { item in item.tracker.map { (item: item.id, tracker: $0) } }
        guard !trackers.isEmpty else { return then() }
        let store = self.store
        work.run(
            { () async throws(DomainError) -> [(item: Int64, tracker: Int64, fix: Fix)] in
                var fixes: [(item: Int64, tracker: Int64, fix: Fix)] = []
                for pair in trackers {
                    do {
                        if let fix = try await store.trackerFix(tracker: pair.tracker) {
                            fixes.append((pair.item, pair.tracker, fix))
                        }
                    } catch {
                        hubLogger.error("storage failure: \(error)")
                        throw DomainError.storage(error)
                    }
                }
                return fixes
            },
            then: { result in
                if case .success(let fixes) = result {
                    for found in fixes
                    where !self.unpaired.contains(found.tracker) && !self.deleted.contains(found.item)
                        && (self.latest[found.item]?.ts ?? .min) < found.fix.ts
                    {
                        self.place(found.item, found.fix)
                    }
                }
                then()
            })
    }
}
