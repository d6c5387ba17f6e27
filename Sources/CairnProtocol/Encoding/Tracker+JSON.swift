// Trackers on the wire: the contract's `{id, device, item, active, key}`, where `key` appears only in the reply to
// `tracker.pair`, and Cairn's `show_items`, `paired_by` (a user id, null when not recorded), `pairer_left` and
// `created` (ms); tracker objects go to the bucket's owners only; an item's position (`items.watch`, `item.pos`) as
// `{item, lat, lon, acc?, alt?, spd?, hdg?, bat?, ts}`; `item.locate`'s answer `{item, position: {lat, lon, acc?, ts,
// bat?} | null, distance?, navigate?: {mode, geo, apple, google}}`; a safe zone `{id, name, lat, lon, radius}`.
import CairnCore
import CairnTrackers
import CairnWire

extension TrackerRecord {
    /// Writes the tracker object, with its key when it was just paired.
    func write(to w: inout JSONWriter, key: String?) {
        w.beginObject()
        w.field("id", id)
        w.field("device", device)
        w.field("item", item)
        w.field("active", active)
        w.field("show_items", showsItems)
        if let pairedBy { w.field("paired_by", pairedBy) } else { w.nullField("paired_by") }
        w.field("pairer_left", pairerLeft)
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

extension ItemLocation {
    /// Writes the answer's fields into the reply.
    func write(to w: inout JSONWriter) {
        w.field("item", item)
        w.key("position")
        if let fix = position {
            w.beginObject()
            w.field("lat", fix.lat)
            w.field("lon", fix.lon)
            w.field("acc", fix.acc)
            w.field("ts", fix.ts)
            w.field("bat", fix.bat)
            w.endObject()
        } else {
            w.null()
        }
        w.field("distance", distance)
        if let navigate {
            w.key("navigate")
            w.beginObject()
            w.field("mode", navigate.mode.rawValue)
            w.field("geo", navigate.geo)
            w.field("apple", navigate.apple)
            w.field("google", navigate.google)
            w.endObject()
        }
    }
}

extension SafeZone {
    /// Writes the zone object.
    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("id", id)
        w.field("name", name)
        w.field("lat", lat)
        w.field("lon", lon)
        w.field("radius", radius)
        w.endObject()
    }
}
