// Durable storage for buckets and items. Every change is committed before the hub replies. An item's photo must be
// an upload of the account that sets it, checked in the same transaction as the write, so an item never points at
// someone else's file or at nothing. A bucket whose last owner goes (an account deleted) goes with it. The per-user
// and per-bucket limits are counted in the same transaction as the insert, so two creates racing cannot pass both.

/// Why a bucket store refused a write.
public enum BucketStoreError: Error, Equatable {
    /// The photo named is not an upload of the account that set it.
    case mediaNotFound
    /// The creator already owns `limit` buckets, as many as allowed.
    case tooManyBuckets(limit: Int)
    /// The bucket already holds `limit` items, as many as allowed.
    case tooManyItems(limit: Int)
}

/// Durable storage for buckets and items.
public protocol BucketStore: Sendable {
    /// Creates a bucket with `owner` as its first owner; throws `BucketStoreError.tooManyBuckets` when `owner`
    /// already owns `limit` buckets (counted in the same transaction as the insert).
    func createBucket(
        name: String, privacy: BucketPrivacy, owner: Int64, at: Int64, limit: Int
    ) async throws -> BucketRecord
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
    /// The items with `alert` on and their buckets' owners (a node's catch-up read, with several nodes).
    func itemAlerts() async throws -> [ItemAlertRecord]
    /// Adds an item; throws `BucketStoreError.mediaNotFound` when `photo` is not an upload of its owner and
    /// `BucketStoreError.tooManyItems` when the bucket already holds `limit` items (counted in the same transaction).
    func createItem(
        bucket: Int64, name: String, note: String?, photo: MediaRef?, at: Int64, limit: Int
    ) async throws -> ItemRecord
    /// Changes an item (an empty note or photo removes it; a photo is an upload of `by`); nil when it is gone.
    func updateItem(id: Int64, changes: ItemChanges, by: Int64) async throws -> ItemRecord?
    /// Deletes an item.
    func deleteItem(id: Int64) async throws
}

/// An item whose owners want left-behind alerts, with its bucket's owners (loaded at start).
public struct ItemAlertRecord: Sendable, Equatable {
    /// The item.
    public var item: Int64
    /// Its bucket.
    public var bucket: Int64
    /// The bucket's owners.
    public var owners: Set<Int64>

    /// Creates the value.
    public init(item: Int64, bucket: Int64, owners: Set<Int64>) {
        self.item = item
        self.bucket = bucket
        self.owners = owners
    }
}

extension BucketStore {
    /// Creates a bucket with no limit on how many its owner has (fixtures, tests).
    public func createBucket(
        name: String, privacy: BucketPrivacy, owner: Int64, at: Int64
    ) async throws -> BucketRecord {
        try await createBucket(name: name, privacy: privacy, owner: owner, at: at, limit: .max)
    }

    /// Adds an item with no limit on how many its bucket holds (fixtures, tests).
    public func createItem(
        bucket: Int64, name: String, note: String?, photo: MediaRef?, at: Int64
    ) async throws -> ItemRecord {
        try await createItem(bucket: bucket, name: name, note: note, photo: photo, at: at, limit: .max)
    }
}
