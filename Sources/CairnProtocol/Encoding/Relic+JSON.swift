// Relics on the wire: the marker (never the content) for maps and browsing, and the whole relic with its text
// and signed media URL for those allowed to open it.
import CairnCore
import CairnRelics
import CairnWire

extension RelicMarker {
    /// The contract's marker `{id, lat, lon, radius, creator?, created, expires?, locked}`, plus `distance` in
    /// metres when browsing.
    func write(distance: Double?, to w: inout JSONWriter) {
        w.beginObject()
        writeFields(to: &w)
        if let distance { w.field("distance", distance.rounded()) }
        w.endObject()
    }

    fileprivate func writeFields(to w: inout JSONWriter) {
        w.field("id", id)
        w.field("lat", lat)
        w.field("lon", lon)
        w.field("radius", radius)
        if !creatorHidden { w.field("creator", creatorID) }  // withheld: left while its creator hid from someone
        w.field("created", createdAt)
        if let expires = expiresAt { w.field("expires", expires) }
        w.field("locked", locked)
    }
}

extension RelicView {
    /// A relic with its content: the marker's fields, `text`, and `media` with a signed `media_url` when it has
    /// media; `state` in listings, `creator_user` when opened.
    func write(to w: inout JSONWriter) {
        w.beginObject()
        record.marker.writeFields(to: &w)
        w.field("text", record.text)
        if let media = record.mediaID {
            w.field("media", media)
            if let mediaURL { w.field("media_url", mediaURL) }
        }
        if let state { w.field("state", state.rawValue) }
        if let creator {
            w.key("creator_user")
            creator.write(to: &w)
        }
        w.endObject()
    }
}
