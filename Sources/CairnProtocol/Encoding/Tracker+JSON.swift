// Trackers on the wire: the contract's `{id, device, item, active, key}`, where `key` appears only in the reply to
// `tracker.pair`, and `created` (ms) is Cairn's addition.
import CairnDomain
import CairnWire

extension TrackerRecord {
    /// Writes the tracker object, with its key when it was just paired.
    func write(to w: inout JSONWriter, key: String?) {
        w.beginObject()
        w.field("id", id)
        w.field("device", device)
        w.field("item", item)
        w.field("active", active)
        if let key { w.field("key", key) }
        w.field("created", created)
        w.endObject()
    }
}
