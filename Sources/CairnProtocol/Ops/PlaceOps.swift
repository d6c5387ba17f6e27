// Place ops (seed 001): places.nearest, places.search and place.get for every member; place.upsert, place.remove
// and places.reload for operators (the domain checks the `ops` role). The request field naming a place is `place`,
// because `id` is the envelope's request id.
import CairnCore
import CairnPlaces
import CairnWire

enum PlaceOps {
    static func register(in table: inout OpTable, places: Places) {
        places.wireForm = PlaceSummary.wireMembers
        table.fast(
            "places.nearest",
            decode: { m throws(WireError) in
                NearestPlacesRequest(
                    lat: try m.double("lat"), lon: try m.double("lon"), limit: try m.int("limit"),
                    category: try m.string("category"), radius: try m.double("radius"))
            },
            handle: { caller, request throws(DomainError) in try places.nearest(caller.member, request) },
            encode: { found, w in
                w.key("places")
                w.beginArray()
                for i in found.indices {
                    w.beginObject()
                    // Each place's members as rendered once when the catalog was built, then its distance.
                    if !found.withWire(at: i, { w.rawMembers($0) }) { found[i].place.write(to: &w) }
                    w.key("distance")  // metres to a tenth, as docs/PROTOCOL.md shows it
                    w.double((found.distance(at: i) * 10).rounded() / 10)
                    w.endObject()
                }
                w.endArray()
            })
        table.fast(
            "places.search", decode: { m throws(WireError) in (try m.requireString("q"), try m.int("limit")) },
            handle: { caller, r throws(DomainError) in try places.search(caller.member, query: r.0, limit: r.1) },
            encode: { found, w in
                w.key("places")
                w.beginArray()
                for place in found {
                    w.beginObject()
                    place.write(to: &w)
                    w.endObject()
                }
                w.endArray()
            })
        table.slow(
            "place.get", decode: placeID,
            handle: { caller, place, done in places.get(caller.member, place: place, done) },
            encode: writePlace)
        table.slow(
            "place.upsert", decode: { m throws(WireError) in (try draft(m), try m.int("place")) },
            handle: { caller, r, done in places.upsert(caller.member, r.0, place: r.1, done) },
            encode: writePlace)
        table.slow(
            "place.remove", decode: placeID,
            handle: { caller, place, done in places.remove(caller.member, place: place, done) },
            encode: { place, w in w.field("place", place) })
        table.slow(
            "places.reload", decode: Fields.none, handle: { caller, _, done in places.reload(caller.member, done) },
            encode: { count, w in w.field("count", count) })
    }

    private static func writePlace(_ place: Place, _ w: inout JSONWriter) {
        w.key("place")
        place.write(to: &w)
    }

    private static func placeID(_ m: borrowing Message) throws(WireError) -> Int64 {
        guard m.contains("place") else {
            throw .badRequest("missing field 'place' (the place's id; 'id' is the request id)")
        }
        return try m.requireInt("place")
    }

    /// A place as an operator writes it: `name`, `lat`, `lon`, and optionally `category` (default `place`),
    /// `source` (default `ops`), `external` and `attributes` (an object of strings, numbers and booleans).
    private static func draft(_ m: borrowing Message) throws(WireError) -> PlaceDraft {
        var attributes: [PlaceAttribute] = []
        if let object = try m.object("attributes") {
            // Counted before any is read: each look-up scans the object's fields, so thousands of keys would cost
            // the loop time in proportion to their square.
            guard object.fieldCount <= Places.maxAttributes else {
                throw .badRequest("field 'attributes' must have at most \(Places.maxAttributes) attributes")
            }
            for key in object.keyNames where !object.isNull(key) {
                if let text = try? object.string(key) {
                    attributes.append(PlaceAttribute(key, .text(text)))
                } else if let number = try? object.double(key) {
                    attributes.append(PlaceAttribute(key, .number(number)))
                } else if let flag = try? object.bool(key) {
                    attributes.append(PlaceAttribute(key, .flag(flag)))
                } else {
                    throw .badRequest("attribute '\(key)' must be a string (at most 4096 bytes), a number or a boolean")
                }
            }
        }
        return PlaceDraft(
            source: try m.string("source") ?? "ops", externalID: try m.string("external"),
            name: try m.requireString("name"), category: try m.string("category") ?? "place",
            lat: try m.requireDouble("lat"), lon: try m.requireDouble("lon"), attributes: attributes)
    }
}
