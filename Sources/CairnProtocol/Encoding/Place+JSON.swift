// Places on the wire: in a list (`places.nearest`, with `distance` in metres; `places.search`) a place is
// `{place, name, category, lat, lon}`, where `place` is its id; `place.get` and `place.upsert` add `source`,
// `external` (its id in that source, when it has one) and `attributes`, an object of strings, numbers and booleans.
import CairnPlaces
import CairnWire

extension PlaceSummary {
    /// Writes the summary's fields into an open object.
    func write(to w: inout JSONWriter) {
        w.field("place", id)
        w.field("name", name)
        w.field("category", category)
        w.field("lat", lat)
        w.field("lon", lon)
    }

    /// The same fields as bytes (`"place":1,"name":…,"lon":7.75`, no braces): the wire form the places catalog
    /// keeps per place, so a nearest answer copies them rather than encoding them again.
    @Sendable static func wireMembers(_ place: PlaceSummary) -> [UInt8] {
        var w = JSONWriter(capacity: 128)
        w.beginObject()
        place.write(to: &w)
        w.endObject()
        return Array(w.bytes.dropFirst().dropLast())
    }
}

extension Place {
    /// Writes the whole place as an object.
    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("place", id)
        w.field("name", draft.name)
        w.field("category", draft.category)
        w.field("lat", draft.lat)
        w.field("lon", draft.lon)
        w.field("source", draft.source)
        w.field("external", draft.externalID)
        w.key("attributes")
        w.beginObject()
        for attribute in draft.attributes {
            w.key(attribute.name)
            switch attribute.value {
            case .text(let text): w.string(text)
            case .number(let number): w.double(number)
            case .flag(let flag): w.bool(flag)
            }
        }
        w.endObject()
        w.endObject()
    }
}
