// Privacy ops: share.pause (ghost mode), share.resume, share.set per friend, and share.list (what the caller shares
// now, for a client that was not there when the rules were set). Enforced by `Social`.
import CairnCore
import CairnSocial
import CairnWire

enum PrivacyOps {
    static func register(in table: inout OpTable, social: Social) {
        table.fast(
            "share.list", decode: Fields.none,
            handle: { caller, _ throws(DomainError) in social.sharing(caller.member) },
            encode: { state, w in
                w.field("paused", state.paused)
                if let until = state.pausedUntil { w.field("until", until) }
                w.array("levels", state.levels) { level, w in
                    w.beginObject()
                    w.field("user", level.user)
                    w.key("level")
                    w.string(level.level.rawValue)
                    if let until = level.until { w.field("until", until) }
                    w.endObject()
                }
            })
        table.slow(
            "share.pause", decode: { m throws(WireError) in try m.int("for") },
            handle: { caller, seconds, done in social.pause(caller.member, forSeconds: seconds, done) },
            encode: { until, w in
                if let until {
                    w.key("until")
                    w.int(until)
                }
            })
        table.slow(
            "share.resume", decode: Fields.none,
            handle: { caller, _, done in social.resume(caller.member, done) }, encode: Fields.empty)
        table.slow(
            "share.set",
            decode: { m throws(WireError) in
                let viewer = try Fields.userID(m)
                let name = try m.requireString("level")
                guard let level = ShareLevel(rawValue: name) else {
                    throw .badRequest("field 'level' must be \"precise\", \"approximate\" or \"hidden\"")
                }
                return (viewer, level, try m.int("for"))
            },
            handle: { caller, r, done in
                social.setLevel(caller.member, viewer: r.0, level: r.1, forSeconds: r.2) { result in
                    done(result.map { (r.1, $0) })
                }
            },
            encode: { r, w in
                w.key("level")
                w.string(r.0.rawValue)
                if let until = r.1 {
                    w.key("until")
                    w.int(until)
                }
            })
    }
}
