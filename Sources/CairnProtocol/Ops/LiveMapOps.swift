// Live-map ops: `pos` (the hot path: a fast op, no closure or allocation per request) and friends.watch /
// friends.unwatch.
import CairnCore
import CairnErrorCodes
import CairnLiveMap
import CairnWire

enum LiveMapOps {
    static func register(in table: inout OpTable, liveMap: LiveMap) {
        let handle = { (caller: OpCaller, report: PositionReport) throws(DomainError) -> FixOutcome in
            try liveMap.report(caller.member, report)
        }
        if liveMap.configuration.durablePositions {
            // Answered once written (storage.durable_positions): the snapshot started for it is shared by the fixes
            // that arrive meanwhile.
            table.confirmed(
                "pos", decode: decodePosition, handle: handle,
                confirm: { confirmed in
                    liveMap.afterWrite { written in
                        confirmed(written ? nil : DomainError(.internal, "the position could not be written; retry"))
                    }
                }, encode: encodeOutcome)
        } else {
            table.fast("pos", decode: decodePosition, handle: handle, encode: encodeOutcome)
        }
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

    private static func encodeOutcome(_ outcome: FixOutcome, _ w: inout JSONWriter) {
        switch outcome {
        case .stale:
            w.key("stale")
            w.bool(true)
        case .flagged:
            w.key("flagged")
            w.bool(true)
        case .accepted: break
        }
    }

    private static func decodePosition(_ m: borrowing Message) throws(WireError) -> PositionReport {
        PositionReport(
            lat: try m.requireDouble("lat"), lon: try m.requireDouble("lon"), acc: try m.double("acc"),
            alt: try m.double("alt"), spd: try m.double("spd"), hdg: try m.double("hdg"),
            bat: try m.double("bat"), ts: try m.int("ts"))
    }
}
