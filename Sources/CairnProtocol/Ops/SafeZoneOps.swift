// Safe zone ops: add, list, remove (each user's own circles where no left-behind alert is raised).
import CairnTrackers
import CairnWire

enum SafeZoneOps {
    static func register(in table: inout OpTable, safeZones: SafeZones) {
        table.slow(
            "safe_zone.add",
            decode: { m throws(WireError) in
                (
                    try m.requireString("name"), try m.requireDouble("lat"), try m.requireDouble("lon"),
                    try m.requireDouble("radius")
                )
            },
            handle: { caller, r, done in
                safeZones.add(caller.member, name: r.0, lat: r.1, lon: r.2, radius: r.3, done)
            },
            encode: { zone, w in
                w.key("zone")
                zone.write(to: &w)
            })
        table.fast(
            "safe_zone.list", decode: Fields.none, handle: { caller, _ in safeZones.list(caller.member) },
            encode: { zones, w in
                w.array("zones", zones) { zone, w in zone.write(to: &w) }
            })
        table.slow(
            "safe_zone.remove", decode: { m throws(WireError) in try m.requireInt("zone") },
            handle: { caller, zone, done in safeZones.remove(caller.member, zone: zone, done) },
            encode: { zone, w in w.field("zone", zone) })
    }
}
