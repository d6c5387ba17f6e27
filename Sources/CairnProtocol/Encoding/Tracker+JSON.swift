// Trackers on the wire: the contract's `{id, device, item, active, key}`, where `key` appears only in the reply to
// `tracker.pair`, and `created` (ms) is Cairn's addition; an item's position (`items.watch`, `item.pos`) as
// `{item, lat, lon, acc?, alt?, spd?, hdg?, bat?, ts}`.
import CairnDomain
import CairnWire

extension TrackerRecord {
    /// Writes the tracker object, with its key when it was just paired.
    func write(to w: inout JSONWriter, key: String?) {
        w.beginObject()
        w.field("id", id)
        w.field("device", device)
        w.field("item", item)
        w.field("active", active)
        if let key { w.field("key", key) }
        w.field("created", created)
        w.endObject()
    }
}

extension ItemPosition {
    /// Writes the position's fields into an open object.
    func write(to w: inout JSONWriter) {
        w.field("item", item)
        w.field("lat", fix.lat)
        w.field("lon", fix.lon)
        if let v = fix.acc { w.field("acc", v) }
        if let v = fix.alt { w.field("alt", v) }
        if let v = fix.spd { w.field("spd", v) }
        if let v = fix.hdg { w.field("hdg", v) }
        if let v = fix.bat { w.field("bat", v) }
        w.field("ts", fix.ts)
    }
}
