import CairnErrorCodes
// The envelope of the wire contract (spec "Envelope"), written in exactly one place: replies carry the request's
// id and "ok", failures without an id become error events naming the op, pushes carry "ev". Handlers only
// write their own fields, through a closure into the already-open object, so no handler can get the shape wrong
// and nothing is built as an intermediate value.

/// The envelope of the contract: replies and error events.
public enum Envelope {
    /// Writes `{"id":7,"ok":true, ...fields}`; `fields` writes key/value pairs into the open object.
    public static func ok(id: Int64, into w: inout JSONWriter, _ fields: (inout JSONWriter) -> Void) {
        w.beginObject()
        w.field("id", id)
        w.field("ok", true)
        fields(&w)
        w.endObject()
    }

    /// Writes `{"id":7,"ok":false,"error":{"code":"...","message":"..."}}` when `id` is not nil, else
    /// `{"ev":"error","op":"<op>","error":{...}}` (without "op" when `op` is nil).
    public static func failure(id: Int64?, op: String?, error: WireError, into w: inout JSONWriter) {
        w.beginObject()
        if let id {
            w.field("id", id)
            w.field("ok", false)
        } else {
            w.key("ev")
            w.string("error" as StaticString)
            if let op { w.field("op", op) }
        }
        w.key("error")
        w.beginObject()
        w.field("code", error.code.rawValue)
        w.field("message", error.message)
        for detail in error.details {
            w.key(detail.name)
            w.int(detail.value)
        }
        w.endObject()
        w.endObject()
    }

    /// Writes `{"ev":"<name>", ...fields}`; `fields` writes key/value pairs into the open object.
    public static func event(_ name: StaticString, into w: inout JSONWriter, _ fields: (inout JSONWriter) -> Void) {
        w.beginObject()
        w.key("ev")
        w.string(name)
        fields(&w)
        w.endObject()
    }
}
