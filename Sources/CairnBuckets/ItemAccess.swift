// Who may do what with an item, for features that hang things on items (trackers): the caller's role in the item's
// bucket (or in a bucket), read from the store off the loop with the caller's friends as they were on the loop when
// asked. An item the caller cannot view is `not_found`, as in the bucket ops, never revealing that it exists.
public import CairnCore
import CairnErrorCodes

/// One caller's access to items, to be asked off the loop. Made by `Buckets.itemAccess(for:)`.
public struct ItemAccess: Sendable {
    let store: any BucketStore
    let user: Int64
    let friends: Set<Int64>

    /// The item and the caller's role in its bucket; `not_found` when it is gone or the caller cannot view it.
    public func role(item: Int64) async throws(DomainError) -> (ItemRecord, BucketRole) {
        let noItem = DomainError(.notFound, "no item \(item)")
        guard let found = try await Buckets.storing({ try await store.item(id: item) }) else { throw noItem }
        do throws(DomainError) {
            return (found, try await Buckets.load(store, found.bucket, for: user, friends: friends).1)
        } catch  where error.code == .notFound { throw noItem }
    }

    /// The caller's role in a bucket; `not_found` when it is gone or the caller cannot view it.
    public func role(bucket: Int64) async throws(DomainError) -> BucketRole {
        try await Buckets.load(store, bucket, for: user, friends: friends).1
    }
}
