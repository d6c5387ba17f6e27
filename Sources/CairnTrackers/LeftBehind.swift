// The left-behind rule (seed 002), per item and owner, with no clock or I/O of its own: the owner of an item with
// `alert` on hears `item.left_behind` once they have been more than `distance` from it continuously for `grace`, and
// `item.reunited` once back.
//
// GPS is noisy, so the rule leans towards silence at both edges:
//   - Accuracy: the gap counts as far only when it is more than `distance` even after taking off both fixes'
//     accuracy radii (the closest the two could really be), so a coarse fix cannot raise a false alarm.
//   - Hysteresis: once alerted, it takes coming back within `reuniteFraction` of `distance` (80 %: 120 m of 150 m), on
//     the plain distance, to be reunited. Between the two edges nothing changes, so jitter around the boundary does
//     not flap. Any evaluation that is not far cancels a pending grace period: "continuously" means every look in
//     between saw the gap too.
//   - Safe zones: while the item lies inside one of the owner's safe zones no alert is armed (a pending one is
//     cancelled). An alert already sent is not withdrawn by a zone; `item.reunited` still follows the owner's return.

/// One (item, owner) pair's left-behind state.
struct LeftBehind: Equatable {
    /// The fraction of the distance within which an alerted owner counts as back.
    static let reuniteFraction = 0.8

    /// What the owner should hear.
    enum Verdict: Equatable {
        /// Left behind, `distance` metres away.
        case leftBehind(distance: Double)
        /// Back with the item.
        case reunited
    }

    /// When the owner was first seen far in the current stretch (ms); nil when not far.
    var farSince: Int64?
    /// True once `item.left_behind` went out and `item.reunited` has not yet.
    var alerted = false

    /// True when nothing is pending or sent (the pair need not be kept).
    var isIdle: Bool { farSince == nil && !alerted }

    /// Looks at the pair now: `gap` metres apart, `slack` the two fixes' accuracy radii together, `sheltered` when
    /// the item lies in one of the owner's safe zones.
    mutating func evaluate(
        gap: Double, slack: Double, sheltered: Bool, now: Int64, distance: Double, graceMs: Int64
    ) -> Verdict? {
        if alerted {
            guard gap <= distance * Self.reuniteFraction else { return nil }
            alerted = false
            farSince = nil
            return .reunited
        }
        guard gap - slack > distance, !sheltered else {
            farSince = nil
            return nil
        }
        let since = farSince ?? now
        farSince = since
        guard now - since >= graceMs else { return nil }
        alerted = true
        farSince = nil
        return .leftBehind(distance: gap)
    }
}
