// What one accepted position changes, held in one stored property of the live map: the latest fixes, the users
// layer of the spatial index, the users to write with the next snapshot, and what relics may trust of each user.
// The live map is a class, and Swift checks every access to a class's stored property at run time (exclusivity:
// a call into the runtime each); a move that touched these as five properties paid for five checks, while one
// mutating call on this value pays for one. The rules themselves live with the live map (`LiveMap+Trust`).
import CairnCore
import CairnGeo
import CairnSpatial

/// The latest fixes, the users index, the snapshot's dirty set and the trust states. Loop thread only.
struct PositionBook {
    var fixes: [Int64: Fix] = [:]
    var index: LayeredIndex
    /// Users whose latest fix the next snapshot writes.
    var dirty: Set<Int64> = []
    /// What relics may believe of each user's place (`LiveMap+Trust`).
    var trust: [Int64: Trust] = [:]

    /// What became of a recorded fix.
    enum Recorded {
        /// Older than the latest fix: nothing changed (the caller keeps it as history).
        case late
        /// The new latest fix (flagged when its implied speed is implausible), its point when it has one, and
        /// whether it became the user's trusted position.
        case latest(Fix, point: GeoPoint?, trusted: Bool)
    }

    /// Compares `fix` with `user`'s latest, flags an implausible speed, and makes it the latest: in memory, in the
    /// index and in the dirty set; then decides whether relics may trust it. One look-up of the latest fix.
    mutating func record(_ fix: Fix, for user: Int64, maxSpeed: Double) -> Recorded {
        var fix = fix
        let slot = fixes.index(forKey: user)
        let previous = slot.map { fixes.values[$0] }
        if let previous, fix.ts < previous.ts { return .late }
        let point = GeoPoint(lat: fix.lat, lon: fix.lon)
        var plausible = false
        if let previous, let point, let before = GeoPoint(lat: previous.lat, lon: previous.lon) {
            let metres = before.distance(to: point)
            plausible = LiveMap.isPlausible(metres, from: previous.ts, to: fix.ts, maxSpeed: maxSpeed)
            // Flagging keeps its contract: only a strictly later fix has an implied speed.
            if fix.ts > previous.ts {
                fix.flagged = metres / (Double(fix.ts - previous.ts) / 1000) > maxSpeed
            }
        }
        if let slot { fixes.values[slot] = fix } else { fixes[user] = fix }
        if let point { index.upsert(user, at: point, in: .users) }
        dirty.insert(user)
        guard let point else { return .latest(fix, point: nil, trusted: false) }
        let trusted = LiveMap.confirm(
            &trust[user, default: Trust()], fix, at: point, previous: previous, plausible: plausible,
            maxSpeed: maxSpeed)
        return .latest(fix, point: point, trusted: trusted)
    }
}
