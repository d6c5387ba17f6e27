// Which position relics may believe. Friends see every fix a user reports (an implausible one flagged), but opening a
// relic, browsing relics and stepping into them grant something because of a place, so they use a separate, trusted
// position per user, the anchor. A fix becomes the anchor only when
//   - it continues the session: the user's previous fix was reported since they came online, and the move from it
//     is plausible (at most `maxSpeed` for the time between the two, and never less than one second's worth, so
//     two fixes of the same instant at the same place confirm each other); and
//   - the move from the current anchor is plausible too.
// So a new session's first fix is never trusted on its own, a teleport is not trusted however often it is repeated,
// and reaching a far place takes the time travelling there would. Relics see no position at all in a session until
// one is confirmed in it (the anchor of an earlier session only serves as the reference for plausibility). `ts` is
// the client's, but may run at most `maxFutureMs` ahead, which bounds what lying about it can gain.

public import CairnCore
public import CairnGeo

/// One user's trust state.
struct Trust {
    /// The last trusted fix's place and time; nil until a fix is confirmed.
    var anchorLat = 0.0
    var anchorLon = 0.0
    var anchorTs: Int64 = 0
    var hasAnchor = false
    /// True once a fix was reported since the user came online (the next fix can continue from it).
    var inSession = false
    /// True once a fix was confirmed since the user came online.
    var confirmedInSession = false
}

extension LiveMap {
    /// True when moving `metres` between fixes taken at `from` and `to` (ms) is within `maxSpeed` (m/s).
    @inline(__always)
    static func isPlausible(_ metres: Double, from: Int64, to: Int64, maxSpeed: Double) -> Bool {
        metres <= maxSpeed * (Double(max(1000, to - from)) / 1000)
    }

    /// Decides whether `fix` becomes the anchor of the user whose trust `state` is; true when it did (relics then see
    /// the move). `PositionBook.record` calls it with the state in place (one hash look-up).
    @inline(__always)
    static func confirm(
        _ state: inout Trust, _ fix: Fix, at point: GeoPoint, previous: Fix?,
        plausible: Bool, maxSpeed: Double
    ) -> Bool {
        var trusted = state.inSession && plausible
        if trusted && state.hasAnchor, let previous,
            !(previous.ts == state.anchorTs && previous.lat == state.anchorLat && previous.lon == state.anchorLon)
        {
            // The previous fix was not the anchor (an untrusted one came between): check against the anchor too.
            let anchor = GeoPoint(lat: state.anchorLat, lon: state.anchorLon) ?? point
            let seconds = Double(max(1000, fix.ts - state.anchorTs)) / 1000
            trusted = anchor.distance(to: point) <= maxSpeed * seconds
        }
        state.inSession = true
        if trusted {
            state.anchorLat = fix.lat
            state.anchorLon = fix.lon
            state.anchorTs = fix.ts
            state.hasAnchor = true
            state.confirmedInSession = true
        }
        return trusted
    }

    /// The user's last session ended: their next fix starts a new one and needs confirming.
    package func sessionEnded(_ user: Int64) {
        book.trust[user]?.inSession = false
        book.trust[user]?.confirmedInSession = false
    }

    /// Where relics may believe `user` is: the last confirmed fix, or nil.
    public func trustedPoint(of user: Int64) -> GeoPoint? {
        guard let state = book.trust[user], state.hasAnchor, state.confirmedInSession else { return nil }
        return GeoPoint(lat: state.anchorLat, lon: state.anchorLon)
    }

    /// The last confirmed fix of `user` in this session (left-behind alerts compare against it), or nil: the latest
    /// fix when it is the anchor, else the anchor's place and time without the latest fix's details.
    public func trustedFix(of user: Int64) -> Fix? {
        guard let state = book.trust[user], state.hasAnchor, state.confirmedInSession else { return nil }
        if let latest = book.fixes[user], latest.ts == state.anchorTs, latest.lat == state.anchorLat,
            latest.lon == state.anchorLon
        {
            return latest
        }
        return Fix(lat: state.anchorLat, lon: state.anchorLon, ts: state.anchorTs)
    }

    /// True when `user` has reported a position that is not (yet) trusted, for a clearer refusal.
    public func hasUnconfirmedFix(_ user: Int64) -> Bool { book.fixes[user] != nil && trustedPoint(of: user) == nil }
}
