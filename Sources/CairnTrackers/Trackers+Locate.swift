// Find my item (seed 002): `item.locate` answers where the item's tracker last was, how far that is from the caller's
// own last position, and a hand-off to a navigation app (`Navigation`). Anyone who can view the item's bucket may ask;
// anyone else gets `not_found`. A hidden item's position goes to the bucket's owners only: a viewer gets the item with
// `position` null, as if its tracker had never reported. The caller's position is the live map's latest fix, asked
// through the `userFix` hook; without one there is no `distance` and the directions start wherever the phone is.
//
// The caller's role is worked out on the loop when the store read comes back, with their friends then; a read that
// an access change (unshare, demotion, privacy, a friendship's end, hiding) overtook is read again
// (`Buckets.itemRole`), so a caller who just lost access never gets the position.
import CairnBuckets
public import CairnCore
import CairnGeo

extension Trackers {
    /// Where the item is, for anyone who can view its bucket.
    public func locate(_ caller: Caller, item: Int64, _ done: @escaping Outcome<ItemLocation>) {
        guard item > 0 else { return done(.failure(.badRequest("field 'item' must be a positive id"))) }
        buckets.itemRole(caller, item: item) { result in
            done(
                result.map { found, role, stale in
                    // Access changed under every read: no position rather than one the caller may have lost.
                    guard !stale else {
                        return ItemLocation(item: found.id, position: nil, distance: nil, navigate: nil)
                    }
                    return self.location(of: found, role: role, for: caller.user.id)
                })
        }
    }

    /// The answer to `item.locate`, on the loop with the latest fixes.
    func location(of item: ItemRecord, role: BucketRole, for user: Int64) -> ItemLocation {
        guard let fix = latest[item.id], !item.hidden || role == .owner else {
            return ItemLocation(item: item.id, position: nil, distance: nil, navigate: nil)
        }
        let mine = userFix?(user)
        var distance: Double?
        if let mine, let from = GeoPoint(lat: mine.lat, lon: mine.lon), let to = GeoPoint(lat: fix.lat, lon: fix.lon) {
            distance = from.distance(to: to).rounded()
        }
        let navigate = Navigation(to: fix, from: mine, distance: distance, walkingDistance: walkingDistance)
        return ItemLocation(item: item.id, position: fix, distance: distance, navigate: navigate)
    }
}
