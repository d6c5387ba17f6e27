// An in-memory stand-in for the bucket part of the store, with the SQLite store's contracts (a photo must be an
// upload of whoever sets it; a bucket goes with its last owner; items go with their bucket) and a switch to make
// writes fail, so the hub's bucket ops are tested without SQLite. A gate can hold `removeViewer` before it writes,
// so a test can act while a friendship's end has not yet removed the shares.
public import CairnBuckets
public import Synchronization

public final class MemoryBucketStore: BucketStore {
    /// Creates an empty one.
    public init() {}

    public struct State {
        /// The empty state.
        public init() {}

        public var buckets: [Int64: BucketRecord] = [:]
        public var items: [Int64: ItemRecord] = [:]
        public var next: Int64 = 1
        /// "media/owner" pairs that exist.
        public var media: Set<String> = []
        public var failWrites = false
    }
    public let state = Mutex(State())
    /// When set, `removeViewer` waits for it to open before it writes.
    public let removeViewerGate = Mutex<Gate?>(nil)

    public struct InjectedFailure: Error {
        /// Creates the error.
        public init() {}
    }

    /// Records an upload of `media` by `owner`.
    public func addMedia(_ media: String, owner: Int64) { _ = state.withLock { $0.media.insert("\(media)/\(owner)") } }

    private static func check(_ s: State) throws { if s.failWrites { throw InjectedFailure() } }

    public func createBucket(
        name: String, privacy: BucketPrivacy, owner: Int64, at: Int64, limit: Int
    ) async throws -> BucketRecord {
        try state.withLock { s in
            try Self.check(s)
            let owned = s.buckets.values.filter { $0.members[owner] == .owner }.count
            guard owned < limit else { throw BucketStoreError.tooManyBuckets(limit: limit) }
            let record = BucketRecord(id: s.next, name: name, privacy: privacy, created: at, members: [owner: .owner])
            s.next += 1
            s.buckets[record.id] = record
            return record
        }
    }

    public func bucket(id: Int64) async throws -> BucketRecord? { state.withLock { $0.buckets[id] } }

    public func buckets(member user: Int64, friends: [Int64]) async throws -> [BucketRecord] {
        let friends = Set(friends)
        return state.withLock { s in
            s.buckets.values.filter { b in
                b.members[user] != nil || (b.privacy == .friends && b.owners.contains(where: friends.contains))
            }.sorted { $0.id < $1.id }
        }
    }

    public func buckets(ownedBy user: Int64) async throws -> [BucketRecord] {
        state.withLock { s in s.buckets.values.filter { $0.members[user] == .owner }.sorted { $0.id < $1.id } }
    }

    public func updateBucket(id: Int64, name: String?, privacy: BucketPrivacy?) async throws -> BucketRecord? {
        try state.withLock { s in
            try Self.check(s)
            guard var b = s.buckets[id] else { return nil }
            if let name { b.name = name }
            if let privacy { b.privacy = privacy }
            s.buckets[id] = b
            return b
        }
    }

    public func deleteBucket(id: Int64) async throws {
        try state.withLock { s in
            try Self.check(s)
            Self.drop(&s, id)
        }
    }

    private static func drop(_ s: inout State, _ id: Int64) {
        s.buckets[id] = nil
        s.items = s.items.filter { $0.value.bucket != id }
    }

    public func setMember(bucket: Int64, user: Int64, role: BucketRole) async throws -> BucketRecord? {
        try state.withLock { s in
            try Self.check(s)
            guard s.buckets[bucket] != nil else { return nil }
            s.buckets[bucket]?.members[user] = role
            return s.buckets[bucket]
        }
    }

    public func removeMember(bucket: Int64, user: Int64) async throws -> BucketRecord? {
        try state.withLock { s in
            try Self.check(s)
            s.buckets[bucket]?.members[user] = nil
            if let b = s.buckets[bucket], b.owners.isEmpty { Self.drop(&s, bucket) }
            return s.buckets[bucket]
        }
    }

    public func removeViewer(_ viewer: Int64, fromBucketsOwnedBy owner: Int64) async throws -> [Int64] {
        if let gate = removeViewerGate.withLock({ $0 }) { await gate.wait() }
        return try state.withLock { s in
            try Self.check(s)
            let ids = s.buckets.values.filter { $0.members[owner] == .owner && $0.members[viewer] == .viewer }.map(\.id)
            for id in ids { s.buckets[id]?.members[viewer] = nil }
            return ids.sorted()
        }
    }

    public func items(bucket: Int64) async throws -> [ItemRecord] {
        state.withLock { s in s.items.values.filter { $0.bucket == bucket }.sorted { $0.id < $1.id } }
    }

    public func item(id: Int64) async throws -> ItemRecord? { state.withLock { $0.items[id] } }

    public func itemAlerts() async throws -> [ItemAlertRecord] {
        state.withLock { s in
            s.items.values.filter(\.alert).sorted { $0.id < $1.id }.compactMap { item in
                s.buckets[item.bucket].map {
                    ItemAlertRecord(item: item.id, bucket: item.bucket, owners: Set($0.owners))
                }
            }.filter { !$0.owners.isEmpty }
        }
    }

    public func createItem(
        bucket: Int64, name: String, note: String?, photo: MediaRef?, at: Int64, limit: Int
    ) async throws -> ItemRecord {
        try state.withLock { s in
            try Self.check(s)
            guard s.items.values.filter({ $0.bucket == bucket }).count < limit else {
                throw BucketStoreError.tooManyItems(limit: limit)
            }
            if let photo, !s.media.contains("\(photo.id)/\(photo.owner)") { throw BucketStoreError.mediaNotFound }
            let item = ItemRecord(
                id: s.next, bucket: bucket, name: name, note: note, done: false, photo: photo, created: at)
            s.next += 1
            s.items[item.id] = item
            return item
        }
    }

    public func updateItem(id: Int64, changes: ItemChanges, by user: Int64) async throws -> ItemRecord? {
        try state.withLock { s in
            try Self.check(s)
            guard var item = s.items[id] else { return nil }
            if let name = changes.name { item.name = name }
            if let note = changes.note { item.note = note.isEmpty ? nil : note }
            if let photo = changes.photo {
                if photo.isEmpty {
                    item.photo = nil
                } else {
                    guard s.media.contains("\(photo)/\(user)") else { throw BucketStoreError.mediaNotFound }
                    item.photo = MediaRef(id: photo, owner: user)
                }
            }
            if let done = changes.done { item.done = done }
            if let hidden = changes.hidden { item.hidden = hidden }
            if let alert = changes.alert { item.alert = alert }
            s.items[id] = item
            return item
        }
    }

    public func deleteItem(id: Int64) async throws {
        try state.withLock { s in
            try Self.check(s)
            s.items[id] = nil
        }
    }
}
