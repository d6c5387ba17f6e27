// Event ops (seed 004): create, join, get, search, delete, and an event's pictures. An event is named by its
// hashtag in `tag`. `admin.event.update` and `admin.event.delete` are the admins' (forbidden to others whatever they
// send, `OpTable.admin`): an absent `title` or `password` leaves it as it is, null clears it (no title; a public
// event); an admin deletes any event, open reports or not.
import CairnAdmin
import CairnPictures
import CairnWire

enum EventOps {
    static func register(
        in table: inout OpTable, events: PictureEvents, pictures: Pictures, administration: Administration
    ) {
        table.slow(
            "event.create",
            decode: { m throws(WireError) in
                (try m.requireString("tag"), try m.string("title"), try m.string("password"))
            }, handle: { caller, r, done in events.create(caller.member, tag: r.0, title: r.1, password: r.2, done) },
            encode: writeEvent)
        table.slow(
            "event.join", decode: { m throws(WireError) in (try m.requireString("tag"), try m.string("password")) },
            handle: { caller, r, done in events.join(caller.member, tag: r.0, password: r.1, done) },
            encode: writeEvent)
        table.slow(
            "event.get", decode: { m throws(WireError) in try m.requireString("tag") },
            handle: { caller, tag, done in events.get(caller.member, tag: tag, done) }, encode: writeEvent)
        table.slow(
            "event.search", decode: { m throws(WireError) in try m.requireString("q") },
            handle: { caller, q, done in events.search(caller.member, query: q, done) },
            encode: { found, w in
                w.array("events", found) { event, w in event.write(to: &w) }
            })
        table.slow(
            "event.delete", decode: { m throws(WireError) in try m.requireString("tag") },
            handle: { caller, tag, done in events.delete(caller.member, tag: tag, done) },
            encode: { tag, w in w.field("tag", tag) })
        table.slow(
            "event.pictures",
            decode: { m throws(WireError) in (try m.requireString("tag"), try m.string("sort"), try m.string("cursor"))
            },
            handle: { caller, r, done in
                pictures.eventPictures(caller.member, tag: r.0, sort: r.1, cursor: r.2, done)
            }, encode: { page, w in page.write(to: &w) })
        table.admin(
            "admin.event.update", gate: administration.admits,
            decode: { m throws(WireError) in
                (
                    try m.requireString("tag"),
                    EventChange(
                        title: try change(m, "title"), password: try change(m, "password"),
                        isPrivate: try m.bool("private"))
                )
            },
            handle: { caller, r, done in events.update(caller.member, tag: r.0, r.1, done) }, encode: writeEvent)
        table.admin(
            "admin.event.delete", gate: administration.admits,
            decode: { m throws(WireError) in (try m.requireString("tag"), try m.string("reason")) },
            handle: { caller, r, done in events.deleteAsAdmin(caller.member, tag: r.0, reason: r.1, done) },
            encode: { tag, w in w.field("tag", tag) })
    }

    private static func change(_ m: Message, _ key: String) throws(WireError) -> FieldChange<String> {
        if m.isNull(key) { return .clear }
        return try m.string(key).map { .set($0) } ?? .keep
    }

    private static func writeEvent(_ event: EventInfo, _ w: inout JSONWriter) {
        w.key("event")
        event.write(to: &w)
    }
}
