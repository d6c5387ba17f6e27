// Chat on the wire: the contract's message object `{id, from, to, text, ts}`.
import CairnCore
import CairnWire

extension ChatMessage {
    /// Writes `{"id":…,"from":…,"to":…,"text":…,"ts":…}`.
    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("id", id)
        w.field("from", from)
        w.field("to", to)
        w.field("text", text)
        w.field("ts", ts)
        w.endObject()
    }
}
