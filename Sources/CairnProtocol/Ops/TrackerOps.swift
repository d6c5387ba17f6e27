// Tracker ops: pair (the key shown once), activate, deactivate, unpair, list a bucket's; watching items' positions;
// finding an item.
import CairnTrackers
import CairnWire

enum TrackerOps {
    static func register(in table: inout OpTable, trackers: Trackers) {
        table.slow(
            "tracker.pair",
            decode: { m throws(WireError) in (try m.requireInt("item"), try m.requireString("device")) },
            handle: { caller, r, done in trackers.pair(caller.member, item: r.0, device: r.1, done) },
            encode: { paired, w in
                w.key("tracker")
                paired.record.write(to: &w, key: paired.key)
            })
        table.slow(
            "tracker.activate", decode: { m throws(WireError) in try m.requireInt("tracker") },
            handle: { caller, tracker, done in trackers.activate(caller.member, tracker: tracker, done) },
            encode: writeTracker)
        table.slow(
            "tracker.deactivate", decode: { m throws(WireError) in try m.requireInt("tracker") },
            handle: { caller, tracker, done in trackers.deactivate(caller.member, tracker: tracker, done) },
            encode: writeTracker)
        table.slow(
            "tracker.update",
            decode: { m throws(WireError) in (try m.requireInt("tracker"), try m.requireBool("show_items")) },
            handle: { caller, r, done in trackers.showItems(caller.member, tracker: r.0, show: r.1, done) },
            encode: writeTracker)
        table.slow(
            "tracker.unpair", decode: { m throws(WireError) in try m.requireInt("tracker") },
            handle: { caller, tracker, done in trackers.unpair(caller.member, tracker: tracker, done) },
            encode: { tracker, w in w.field("tracker", tracker) })
        table.slow(
            "tracker.list", decode: { m throws(WireError) in try m.requireInt("bucket") },
            handle: { caller, bucket, done in trackers.list(caller.member, bucket: bucket, done) },
            encode: { list, w in
                w.key("trackers")
                w.beginArray()
                for tracker in list { tracker.write(to: &w, key: nil) }
                w.endArray()
            })
        table.slow(
            "items.watch", decode: Fields.none, handle: { caller, _, done in trackers.watch(caller.member, done) },
            encode: { positions, w in
                w.key("positions")
                w.beginArray()
                for position in positions {
                    w.beginObject()
                    position.write(to: &w)
                    w.endObject()
                }
                w.endArray()
            })
        table.slow(
            "item.locate", decode: { m throws(WireError) in try m.requireInt("item") },
            handle: { caller, item, done in trackers.locate(caller.member, item: item, done) },
            encode: { location, w in location.write(to: &w) })
        table.fast(
            "items.unwatch", decode: Fields.none, handle: { caller, _ in trackers.unwatch(caller.member) },
            encode: { _, _ in })
    }

    private static func writeTracker(_ tracker: TrackerRecord, _ w: inout JSONWriter) {
        w.key("tracker")
        tracker.write(to: &w, key: nil)
    }
}
