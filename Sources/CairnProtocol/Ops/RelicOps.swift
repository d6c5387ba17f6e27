// Relic ops (seed 003): create, nearby, open, mine, delete. The request field naming a relic is `relic`, because
// `id` is the envelope's request id.
import CairnCore
import CairnRelics
import CairnWire

enum RelicOps {
    static func register(in table: inout OpTable, relics: Relics) {
        table.slow(
            "relic.create",
            decode: { m throws(WireError) in
                RelicRequest(
                    text: try m.requireString("text"), radius: try m.requireDouble("radius"), ttl: try m.int("ttl"),
                    password: try m.string("password"), media: try m.string("media"), lat: try m.double("lat"),
                    lon: try m.double("lon"))
            }, handle: { caller, request, done in relics.create(caller.member, request, done) },
            encode: { relic, w in
                w.key("relic")
                relic.write(to: &w)
            })
        table.fast(
            "relic.nearby", decode: { m throws(WireError) in try m.double("radius") },
            handle: { caller, radius throws(DomainError) in try relics.nearby(caller.member, radius: radius) },
            encode: { found, w in
                w.array("relics", found.relics) { r, w in r.marker.write(distance: r.distance, to: &w) }
                if found.truncated { w.field("truncated", true) }
            })
        table.slow(
            "relic.open", decode: { m throws(WireError) in (try relicID(m), try m.string("password")) },
            handle: { caller, r, done in relics.open(caller.member, relic: r.0, password: r.1, done) },
            encode: { relic, w in
                w.key("relic")
                relic.write(to: &w)
            })
        table.slow(
            "relic.mine", decode: { m throws(WireError) in (try m.int("before"), try m.int("limit")) },
            handle: { caller, r, done in relics.mine(caller.member, before: r.0, limit: r.1, done) },
            encode: { page, w in
                w.array("relics", page.relics) { relic, w in relic.write(to: &w) }
                w.field("more", page.more)
            })
        table.slow(
            "relic.delete", decode: relicID,
            handle: { caller, relic, done in relics.delete(caller.member, relic: relic, done) },
            encode: { relic, w in w.field("relic", relic) })
    }

    private static func relicID(_ m: borrowing Message) throws(WireError) -> Int64 {
        guard m.contains("relic") else {
            throw .badRequest("missing field 'relic' (the relic's id; 'id' is the request id)")
        }
        let relicID = try m.requireInt("relic")
        guard relicID > 0 else { throw .badRequest("field 'relic' must be a relic id") }
        return relicID
    }
}
