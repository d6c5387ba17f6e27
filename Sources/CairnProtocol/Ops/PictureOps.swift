// Picture ops (seed 004): post, get, like, unlike, delete, report, nearby, search, and the live watch. A request
// names the picture in `picture`, because `id` is the envelope's request id.
import CairnAdmin
import CairnCore
import CairnPictures
import CairnWire

enum PictureOps {
    static func register(in table: inout OpTable, pictures: Pictures, administration: Administration) {
        table.slow(
            "picture.post",
            decode: { m throws(WireError) in
                (
                    try m.requireString("media"), try m.string("caption"), try m.string("event"),
                    try m.bool("place") ?? false
                )
            },
            handle: { caller, r, done in
                pictures.post(caller.member, media: r.0, caption: r.1, event: r.2, place: r.3, done)
            },
            encode: writePicture)
        table.slow(
            "picture.get", decode: pictureID,
            handle: { caller, id, done in pictures.get(caller.member, picture: id, done) }, encode: writePicture)
        table.slow(
            "picture.like", decode: pictureID,
            handle: { caller, id, done in pictures.like(caller.member, picture: id, liked: true, done) },
            encode: { likes, w in w.field("likes", likes) })
        table.slow(
            "picture.unlike", decode: pictureID,
            handle: { caller, id, done in pictures.like(caller.member, picture: id, liked: false, done) },
            encode: { likes, w in w.field("likes", likes) })
        table.slow(
            "picture.delete", decode: pictureID,
            handle: { caller, id, done in pictures.delete(caller.member, picture: id, done) },
            encode: { id, w in w.field("picture", id) })
        table.slow(
            "picture.report",
            decode: { m throws(WireError) in (try pictureID(m), try m.requireString("reason"), try m.string("text")) },
            handle: { caller, r, done in
                pictures.report(caller.member, picture: r.0, reason: r.1, text: r.2, done)
            }, encode: { hidden, w in w.field("hidden", hidden) })
        table.slow(
            "picture.nearby",
            decode: { m throws(WireError) in
                (try m.requireDouble("radius"), try m.string("sort"), try m.string("cursor"))
            },
            handle: { caller, r, done in
                pictures.nearby(caller.member, radius: r.0, sort: r.1, cursor: r.2, done)
            }, encode: { page, w in page.write(to: &w) })
        table.slow(
            "picture.search", decode: { m throws(WireError) in try m.requireString("q") },
            handle: { caller, q, done in pictures.search(caller.member, query: q, done) },
            encode: { found, w in
                w.array("pictures", found) { picture, w in picture.write(to: &w) }
            })
        table.slow(
            "pictures.watch", decode: { m throws(WireError) in (try m.double("radius"), try m.string("event")) },
            handle: { caller, r, done in pictures.watch(caller.member, radius: r.0, event: r.1, done) },
            encode: { watch, w in
                switch watch {
                case .radius(let radius): w.field("radius", radius)
                case .event: break
                }
            })
        // The admins' queue of reported pictures (forbidden to others, whatever they send).
        table.admin(
            "admin.reports", gate: administration.admits, decode: { m throws(WireError) in try m.string("state") },
            handle: { caller, state, done in pictures.reports(caller.member, state: state, done) },
            encode: { rows, w in
                w.array("pictures", rows) { row, w in row.write(to: &w) }
            })
        for (op, remove) in [("admin.picture.restore", false), ("admin.picture.remove", true)] {
            table.admin(
                op, gate: administration.admits,
                decode: { m throws(WireError) in (try pictureID(m), try m.string("reason")) },
                handle: { caller, r, done in
                    pictures.resolve(caller.member, picture: r.0, remove: remove, reason: r.1, done)
                }, encode: { id, w in w.field("picture", id) })
        }
        table.fast(
            "pictures.unwatch", decode: Fields.none,
            handle: { caller, _ throws(DomainError) in pictures.unwatch(caller.member) }, encode: Fields.empty)
    }

    private static func writePicture(_ picture: PictureView, _ w: inout JSONWriter) {
        w.key("picture")
        picture.write(to: &w)
    }

    private static func pictureID(_ m: borrowing Message) throws(WireError) -> Int64 {
        guard m.contains("picture") else {
            throw .badRequest("missing field 'picture' (the picture's id; 'id' is the request id)")
        }
        let id = try m.requireInt("picture")
        guard id > 0 else { throw .badRequest("field 'picture' must be a picture id") }
        return id
    }
}
