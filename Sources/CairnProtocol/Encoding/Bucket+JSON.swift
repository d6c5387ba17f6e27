// Buckets and items on the wire: the contract's bucket `{id, name, privacy, role, owners, viewers, created}` and
// item `{id, bucket, name, note?, done, hidden, alert, photo_url | placeholder_url, tracker?, created}`.
import CairnBuckets
import CairnWire

extension BucketView {
    /// Writes the bucket object.
    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("id", record.id)
        w.field("name", record.name)
        w.field("privacy", record.privacy.rawValue)
        w.field("role", role.rawValue)
        w.array("owners", record.owners) { id, w in w.int(id) }
        w.array("viewers", record.viewers) { id, w in w.int(id) }
        w.field("created", record.created)
        w.endObject()
    }
}

extension ItemView {
    /// Writes the item object.
    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("id", record.id)
        w.field("bucket", record.bucket)
        w.field("name", record.name)
        if let note = record.note { w.field("note", note) }
        w.field("done", record.done)
        w.field("hidden", record.hidden)
        w.field("alert", record.alert)
        if let photoURL { w.field("photo_url", photoURL) }
        if let placeholderURL { w.field("placeholder_url", placeholderURL) }
        if let tracker = record.tracker { w.field("tracker", tracker) }
        w.field("created", record.created)
        w.endObject()
    }
}
