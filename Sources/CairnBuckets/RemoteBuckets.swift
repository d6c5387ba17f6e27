// Buckets across nodes. Buckets keep nothing in memory, but the trackers do hang live state on items: which items
// have `alert` on and who owns them (left-behind alerts), which items are hidden, which items and trackers are gone.
// With several nodes on one shared store, a change committed through one node fires those hooks there only, so
// Buckets tells this port after every committed change of a bucket (its items, flags, owners, members, or the
// bucket itself gone) and the ids of items deleted; the composition publishes them, and every other node reads the
// bucket and its items again and brings the trackers' state for it up to date, and forgets deleted items
// (`Trackers+RemoteAlerts`). A single node has no port
// and nothing changes. Loop thread only.
package import CairnCore

/// Where changes of buckets committed here go for the other nodes.
public protocol RemoteBuckets: AnyObject {
    /// Bucket `bucket` changed here (committed), or is gone.
    func bucketTouched(_ bucket: Int64)
    /// Items were deleted here (alone or with their bucket; committed).
    func itemsGone(_ items: [Int64])
}

extension Buckets {
    /// The bucket as stored now and its items (nil when it is gone), read off the loop; `done` runs on the loop.
    package func contents(
        of bucket: Int64, _ done: @escaping (Result<(BucketRecord, [ItemRecord])?, DomainError>) -> Void
    ) {
        let store = self.store
        work.run(
            { () async throws(DomainError) -> (BucketRecord, [ItemRecord])? in
                guard let record = try await Self.storing({ try await store.bucket(id: bucket) }) else { return nil }
                return (record, try await Self.storing { try await store.items(bucket: bucket) })
            }, then: done)
    }

    /// The item as stored now (nil when it is gone), read off the loop; `done` runs on the loop.
    package func item(_ id: Int64, _ done: @escaping (Result<ItemRecord?, DomainError>) -> Void) {
        let store = self.store
        work.run(
            { () async throws(DomainError) -> ItemRecord? in try await Self.storing { try await store.item(id: id) } },
            then: done)
    }
}
