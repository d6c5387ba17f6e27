// Durable storage for buckets and items. Every change is committed before the hub replies. An item's photo must be
// an upload of the account that sets it, checked in the same transaction as the write, so an item never points at
// someone else's file or at nothing. A bucket whose last owner goes (an account deleted) goes with it.

/// Why a bucket store refused a write.
public enum BucketStoreError: Error, Equatable {
    /// The photo named is not an upload of the account that set it.
    case mediaNotFound
}

/// Durable storage for buckets and items.
public protocol BucketStore: Sendable {
    /// Creates a bucket with `owner` as its first owner.
    func createBucket(name: String, privacy: BucketPrivacy, owner: Int64, at: Int64) async throws -> BucketRecord
    /// One bucket with its members.
    func bucket(id: Int64) async throws -> BucketRecord?
    /// Every bucket `user` is a member of, and every `friends` bucket one of `friends` owns; oldest first.
    func buckets(member user: Int64, friends: [Int64]) async throws -> [BucketRecord]
    /// Every bucket where `user` is an owner.
    func buckets(ownedBy user: Int64) async throws -> [BucketRecord]
    /// Renames or changes the privacy of a bucket; nil when it is gone.
    func updateBucket(id: Int64, name: String?, privacy: BucketPrivacy?) async throws -> BucketRecord?
    /// Deletes a bucket and its items.
    func deleteBucket(id: Int64) async throws
    /// Adds `user` to a bucket or changes their role; nil when the bucket is gone.
    func setMember(bucket: Int64, user: Int64, role: BucketRole) async throws -> BucketRecord?
    /// Removes `user` from a bucket; nil when the bucket is gone.
    func removeMember(bucket: Int64, user: Int64) async throws -> BucketRecord?
    /// Removes `viewer` from every bucket `owner` owns where `viewer` is a viewer; returns those buckets' ids.
    func removeViewer(_ viewer: Int64, fromBucketsOwnedBy owner: Int64) async throws -> [Int64]
    /// The items of a bucket, oldest first.
    func items(bucket: Int64) async throws -> [ItemRecord]
    /// One item.
    func item(id: Int64) async throws -> ItemRecord?
    /// Adds an item; throws `BucketStoreError.mediaNotFound` when `photo` is not an upload of its owner.
    func createItem(
        bucket: Int64, name: String, note: String?, photo: MediaRef?, at: Int64
    ) async throws -> ItemRecord
    /// Changes an item (an empty note or photo removes it; a photo is an upload of `by`); nil when it is gone.
    func updateItem(id: Int64, changes: ItemChanges, by: Int64) async throws -> ItemRecord?
    /// Deletes an item.
    func deleteItem(id: Int64) async throws
}
