// Bucket and item ops: create, list, get, update, delete, share, unshare; item create, update, delete.
import CairnBuckets
import CairnWire

enum BucketOps {
    static func register(in table: inout OpTable, buckets: Buckets) {
        table.slow(
            "bucket.create",
            decode: { m throws(WireError) in (try m.requireString("name"), try m.string("privacy")) },
            handle: { caller, r, done in buckets.create(caller.member, name: r.0, privacy: r.1, done) },
            encode: writeBucket)
        table.slow(
            "bucket.list", decode: Fields.none, handle: { caller, _, done in buckets.list(caller.member, done) },
            encode: { list, w in
                w.array("buckets", list) { bucket, w in bucket.write(to: &w) }
            })
        table.slow(
            "bucket.get", decode: { m throws(WireError) in try m.requireInt("bucket") },
            handle: { caller, bucket, done in buckets.get(caller.member, bucket: bucket, done) },
            encode: { found, w in
                writeBucket(found.0, &w)
                w.array("items", found.1) { item, w in item.write(to: &w) }
            })
        table.slow(
            "bucket.update",
            decode: { m throws(WireError) in
                (try m.requireInt("bucket"), try m.string("name"), try m.string("privacy"))
            },
            handle: { caller, r, done in
                buckets.update(caller.member, bucket: r.0, name: r.1, privacy: r.2, done)
            }, encode: writeBucket)
        table.slow(
            "bucket.delete", decode: { m throws(WireError) in try m.requireInt("bucket") },
            handle: { caller, bucket, done in buckets.delete(caller.member, bucket: bucket, done) },
            encode: { bucket, w in w.field("bucket", bucket) })
        table.slow(
            "bucket.share",
            decode: { m throws(WireError) in
                (try m.requireInt("bucket"), try m.requireInt("user"), try m.requireString("role"))
            },
            handle: { caller, r, done in buckets.share(caller.member, bucket: r.0, user: r.1, role: r.2, done) },
            encode: writeBucket)
        table.slow(
            "bucket.unshare",
            decode: { m throws(WireError) in (try m.requireInt("bucket"), try m.requireInt("user")) },
            handle: { caller, r, done in buckets.unshare(caller.member, bucket: r.0, user: r.1, done) },
            encode: { bucket, w in w.field("bucket", bucket) })
        table.slow(
            "item.create",
            decode: { m throws(WireError) in
                (try m.requireInt("bucket"), try m.requireString("name"), try m.string("photo"), try m.string("note"))
            },
            handle: { caller, r, done in
                buckets.createItem(caller.member, bucket: r.0, name: r.1, photo: r.2, note: r.3, done)
            }, encode: writeItem)
        table.slow(
            "item.update",
            decode: { m throws(WireError) in
                (
                    try m.requireInt("item"),
                    ItemChanges(
                        name: try m.string("name"), note: try m.string("note"), photo: try m.string("photo"),
                        done: try m.bool("done"), hidden: try m.bool("hidden"), alert: try m.bool("alert"))
                )
            },
            handle: { caller, r, done in buckets.updateItem(caller.member, item: r.0, changes: r.1, done) },
            encode: writeItem)
        table.slow(
            "item.delete", decode: { m throws(WireError) in try m.requireInt("item") },
            handle: { caller, item, done in buckets.deleteItem(caller.member, item: item, done) },
            encode: { item, w in w.field("item", item) })
    }

    private static func writeBucket(_ bucket: BucketView, _ w: inout JSONWriter) {
        w.key("bucket")
        bucket.write(to: &w)
    }

    private static func writeItem(_ item: ItemView, _ w: inout JSONWriter) {
        w.key("item")
        item.write(to: &w)
    }
}
