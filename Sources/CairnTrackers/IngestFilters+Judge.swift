// How the ingest's filters judge each fix of a tracker's report (the filters themselves, `IngestFilters`, are part
// of the hub's configuration in the core). Each fix of a report is judged in time order against the last fix
// accepted (the stored latest, then the batch's own accepted fixes). The speed filter re-anchors: after
// `reanchorAfter` consecutive rejections, or once the last accepted fix is `reanchorGapMs` old, the next fix is
// accepted as it is, so a tracker that really moved while nobody heard it is not frozen at its old place.
public import CairnCore
import CairnGeo

/// What the filters made of one fix.
public enum IngestVerdict: Sendable, Equatable {
    /// Accepted: it becomes the last accepted fix (re-anchoring the speed filter when it says why).
    case accepted(SpeedReanchor?)
    /// Older than the last accepted fix: it never becomes the latest, and changes nothing.
    case older
    /// Dropped by a filter.
    case dropped(IngestDrop)
}

/// What the filters remember of a tracker between fixes.
public struct IngestFilterState: Sendable, Equatable {
    /// The last fix accepted (the stored latest to begin with).
    public var last: Fix?
    /// Fixes dropped for speed since the last one accepted.
    public var speedRejections: Int

    /// Creates the value.
    public init(last: Fix?, speedRejections: Int) {
        self.last = last
        self.speedRejections = speedRejections
    }
}

extension IngestFilters {
    /// Judges `fix` (reported at `now`, `markedInvalid` when the device says it is not valid) against `state`, and
    /// moves `state` on: an accepted fix becomes the last one and clears the speed rejections, a fix dropped for
    /// speed adds one, anything else leaves it as it was. Fixes must be judged in time order.
    public func judge(
        _ fix: Fix, markedInvalid: Bool = false, state: inout IngestFilterState, now: Int64
    ) -> IngestVerdict {
        if invalid && markedInvalid { return .dropped(.invalid) }
        if zero && fix.lat == 0 && fix.lon == 0 { return .dropped(.zero) }
        if fix.ts > now + futureMs { return .dropped(.future) }
        if maxAccuracy > 0, let acc = fix.acc, acc > maxAccuracy { return .dropped(.accuracy) }
        var reanchor: SpeedReanchor?
        if let last = state.last {
            let elapsed = fix.ts - last.ts
            if elapsed < 0 { return .older }
            if duplicate && elapsed == 0 { return .dropped(.duplicate) }
            if minPeriodMs > 0 && elapsed > 0 && elapsed < minPeriodMs { return .dropped(.period) }
            if maxSpeed > 0 && elapsed > 0 {
                if reanchorGapMs > 0 && elapsed >= reanchorGapMs {
                    reanchor = Self.impliedSpeed(from: last, to: fix) > maxSpeed ? .gap : nil
                } else if Self.impliedSpeed(from: last, to: fix) > maxSpeed {
                    guard reanchorAfter > 0 && state.speedRejections >= reanchorAfter else {
                        state.speedRejections += 1
                        return .dropped(.speed)
                    }
                    reanchor = .count
                }
            }
        }
        state.last = fix
        state.speedRejections = 0
        return .accepted(reanchor)
    }

    /// The great-circle speed from `a` to `b` (m/s); `b` is later than `a`. Checked fixes are always points.
    static func impliedSpeed(from a: Fix, to b: Fix) -> Double {
        guard let from = GeoPoint(lat: a.lat, lon: a.lon), let to = GeoPoint(lat: b.lat, lon: b.lon) else { return 0 }
        return from.distance(to: to) / (Double(b.ts - a.ts) / 1000)
    }
}
