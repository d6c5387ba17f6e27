import CairnCore
// What an OwnTracks device is answered after it reported: the other items of its item's bucket, as OwnTracks
// messages the app shows as friends on its map — per item a `card` (its name, so the app labels it) followed by a
// `location`. Both carry the same `tid` and `topic`: the Android app files a friend under `owntracks/http/<tid>` in
// HTTP mode and the iOS app under `topic`, so a card and a location of one item meet in one friend. The tid is the
// item id in base 36 (stable and distinct across the hub; the app draws it when there is no picture), the topic
// `owntracks/cairn/item<id>`. Numbers are what the apps read: `tst` in epoch seconds, `vel` in km/h, integers where
// the OwnTracks JSON has integers.
import CairnTrackers
import CairnWire

enum OwnTracksFriends {
    /// The JSON array for `mates` (`[]` when there are none).
    static func encode(_ mates: [BucketMate]) -> [UInt8] {
        var w = JSONWriter(capacity: 64 + mates.count * 256)
        w.beginArray()
        for mate in mates {
            let tid = tid(mate.item)
            let topic = "owntracks/cairn/item\(mate.item)"
            w.beginObject()
            w.field("_type", "card")
            w.field("tid", tid)
            w.field("topic", topic)
            w.field("name", mate.name)
            w.endObject()
            let fix = mate.fix
            w.beginObject()
            w.field("_type", "location")
            w.field("tid", tid)
            w.field("topic", topic)
            w.field("lat", fix.lat)
            w.field("lon", fix.lon)
            w.field("tst", fix.ts / 1000)
            w.field("acc", fix.acc.map(rounded))
            w.field("alt", fix.alt.map(rounded))
            w.field("vel", fix.spd.map { rounded($0 * 3.6) })
            w.field("cog", fix.hdg.map(rounded))
            w.field("batt", fix.bat.map(rounded))
            w.endObject()
        }
        w.endArray()
        return w.bytes
    }

    /// The item id in upper-case base 36.
    static func tid(_ item: Int64) -> String { String(item, radix: 36, uppercase: true) }

    private static func rounded(_ value: Double) -> Int64 { Int64(value.rounded()) }
}
