// The admin role's ops (docs/PROTOCOL.md, Administration): admin.users, admin.user.suspend, admin.user.unsuspend,
// admin.audit, admin.settings.get / .set and admin.stats. All of them are `forbidden` to accounts without the role,
// whatever the request holds: each passes `Administration.admits` before its decoding is looked at (`OpTable.admin`);
// the rules live in `Administration`. `admin.settings.set` reads each value with the type its setting was
// registered with, so a wrong type is refused naming the key before the domain sees the request.
import CairnAdmin
import CairnWire

enum AdminOps {
    static func register(in table: inout OpTable, administration: Administration) {
        table.admin(
            "admin.users", gate: administration.admits,
            decode: { m throws(WireError) in
                (try m.string("q"), try m.string("cursor"), try m.int("limit"), try m.bool("guests") ?? false)
            },
            handle: { caller, r, done in
                administration.users(caller.member, query: r.0, cursor: r.1, limit: r.2, guests: r.3, done)
            },
            encode: { page, w in
                w.array("users", page.users) { row, w in row.write(to: &w) }
                w.field("cursor", page.cursor)
            })

        table.admin(
            "admin.user.suspend", gate: administration.admits,
            decode: { m throws(WireError) in
                (try m.requireInt("user"), try m.requireString("reason"), try m.int("for"))
            },
            handle: { caller, r, done in
                administration.suspend(caller.member, user: r.0, reason: r.1, seconds: r.2, done)
            },
            encode: { row, w in
                w.key("user")
                row.write(to: &w)
            })

        table.admin(
            "admin.user.unsuspend", gate: administration.admits,
            decode: { m throws(WireError) in try m.requireInt("user") },
            handle: { caller, user, done in administration.unsuspend(caller.member, user: user, done) },
            encode: { lifted, w in
                w.key("lifted")
                w.bool(lifted)
            })

        table.admin(
            "admin.settings.get", gate: administration.admits, decode: Fields.none,
            handle: { caller, _, done in administration.settingsInForce(caller.member, done) },
            encode: { reading, w in reading.writeFields(to: &w) })

        let settings = administration.settings
        table.admin(
            "admin.settings.set", gate: administration.admits,
            decode: { m throws(WireError) -> [AdminSettingChange] in
                guard let object = try m.object("settings") else { throw .badRequest("missing field 'settings'") }
                var changes: [AdminSettingChange] = []
                for key in object.keyNames {
                    if object.isNull(key) {
                        changes.append((key, nil))  // back to the default
                        continue
                    }
                    switch settings.setting(key)?.kind {
                    case .integer: changes.append((key, .integer(try object.requireInt(key))))
                    case .boolean: changes.append((key, .boolean(try object.requireBool(key))))
                    case nil:
                        let known = settings.all.map(\.key).joined(separator: ", ")
                        throw .badRequest("unknown setting '\(key)' (known: \(known))")
                    }
                }
                return changes
            },
            handle: { caller, changes, done in administration.changeSettings(caller.member, changes, done) },
            encode: { reading, w in reading.writeFields(to: &w) })

        table.admin(
            "admin.stats", gate: administration.admits, decode: { m throws(WireError) in try m.int("days") },
            handle: { caller, days, done in administration.stats(caller.member, days: days, done) },
            encode: { rows, w in
                w.array("rows", rows) { row, w in row.write(to: &w) }
            })

        table.admin(
            "admin.audit", gate: administration.admits, decode: { m throws(WireError) in try m.int("before") },
            handle: { caller, before, done in administration.audit(caller.member, before: before, done) },
            encode: { page, w in
                w.key("entries")
                w.beginArray()
                for (id, entry) in page.entries { entry.write(id: id, to: &w) }
                w.endArray()
                w.field("before", page.next)
            })
    }
}
