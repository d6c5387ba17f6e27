// Live-map ops: `pos` (the hot path: a fast op, no closure or allocation per request) and friends.watch /
// friends.unwatch.
import CairnDomain
import CairnWire

enum LiveMapOps {
    static func register(in table: inout OpTable, liveMap: LiveMap) {
        table.fast(
            "pos", decode: decodePosition,
            handle: { caller, report throws(DomainError) in try liveMap.report(caller.member, report) },
            encode: { outcome, w in
                switch outcome {
                case .stale:
                    w.key("stale")
                    w.bool(true)
                case .flagged:
                    w.key("flagged")
                    w.bool(true)
                case .accepted: break
                }
            })
        table.fast(
            "friends.watch", decode: Fields.none,
            handle: { caller, _ throws(DomainError) in liveMap.watch(caller.member) },
            encode: { positions, w in
                w.key("positions")
                w.beginArray()
                for p in positions {
                    w.beginObject()
                    p.write(to: &w)
                    w.endObject()
                }
                w.endArray()
            })
        table.fast(
            "friends.unwatch", decode: Fields.none,
            handle: { caller, _ throws(DomainError) in liveMap.unwatch(caller.member) }, encode: Fields.empty)
    }

    private static func decodePosition(_ m: borrowing Message) throws(WireError) -> PositionReport {
        PositionReport(
            lat: try m.requireDouble("lat"), lon: try m.requireDouble("lon"), acc: try m.double("acc"),
            alt: try m.double("alt"), spd: try m.double("spd"), hdg: try m.double("hdg"),
            bat: try m.double("bat"), ts: try m.int("ts"))
    }
}
