// Buckets and items (seeds 000 and 002): named collections with owners and viewers, `private` (members only) or
// `friends` (also every friend of an owner), shared only with friends; items with a name, a note, a photo or the
// placeholder, and `done`. Only owners change a bucket, share it, and add or delete items (with the seed's
// refusals); a viewer may tick items off (`item.update {done}` alone) — the seed's shared bucket list — and
// nothing else. A bucket the caller cannot view is `not_found`, never revealing that it exists.
//
// Buckets keep nothing in memory: every op reads the bucket and its members from the store, and who can view it
// (members, plus the owners' friends for a `friends` bucket, asked of `Social`) is worked out on the loop when a
// push goes out. Every change is committed before the reply; then `bucket.changed` goes to everyone who can view
// and `bucket.removed` to whoever could view before and no longer can (unshare, delete, privacy narrowed, a
// friendship ended). When a friendship ends (the hub wires Social's hook here), each loses the viewer shares in the
// other's buckets; co-ownership is kept (an owner is never removed behind their back, and a bucket never orphaned).
//
// The access check and the write are separate store calls: a share and an unshare racing on two connections settle
// in whichever order they commit, as two requests one after the other would.
//
// Features that hang live state on items (trackers: positions, left-behind alerts) hear of committed changes through
// hooks the hub wires: items gone (deleted, or with their bucket), an item's flags changed, a bucket's owners changed,
// users lost sight of a bucket. Reads of who may see an item are checked against `AccessEpochs` when they come back,
// so one that an access change overtook is never used.
// An owner owns at most `bucketsPerUser` buckets they created, a bucket holds at most `itemsPerBucket` items.
public import CairnCore
import CairnErrorCodes
public import CairnMedia
import CairnSessions
package import CairnSocial
import Logging

/// The bucket and item ops. Loop thread only.
public final class Buckets {
    /// Longest name, in bytes of UTF-8.
    public static let nameLimit = 100
    /// Longest note, in bytes of UTF-8.
    public static let noteLimit = 2000
    /// The seed's refusal to a non-owner adding an item.
    public static let notOwnerAdd = "You are not an owner of this bucket so therefore you cannot add an item."
    /// The seed's refusal to a non-owner deleting an item.
    public static let notOwnerDelete = "You are not an owner of this bucket so therefore you cannot delete the item."

    let store: any BucketStore
    let work: LoopWork
    private let clock: any Clock
    private let social: Social
    private let bucketsPerUser: Int
    private let itemsPerBucket: Int
    package var events: (any HubEvents)?
    /// Items are gone (deleted, or deleted with their bucket), committed.
    package var itemsGone: (([Int64]) -> Void)?
    /// An item was changed (committed), with its bucket's owners as they are now: when an owner change was announced
    /// while the item's write was in flight, they are read again first (and the hook is not called at all when the
    /// item changed again meanwhile: that change's call stands).
    package var itemChanged: ((ItemRecord, Set<Int64>) -> Void)?
    /// Users lost sight of a bucket (committed and announced): its items' pending positions are withdrawn from them.
    package var accessLost: ((_ bucket: Int64, _ users: Set<Int64>) -> Void)?
    /// When access last changed, for reads of who may see an item (`AccessEpochs`).
    var epochs = AccessEpochs()
    /// How many times a read of who may see an item is read again when it comes back stale, before it is given up.
    static let staleRetries = 3
    /// Users were told a bucket they view changed or is gone to them (committed): with several nodes, the items
    /// their watching connections follow are read again.
    package var viewsChanged: (([Int64]) -> Void)?
    /// Several nodes: committed changes of buckets, for the other nodes (nil: a single node).
    package var remote: (any RemoteBuckets)?
    /// A bucket's owners may have changed (committed); nil when the bucket is gone.
    package var ownersChanged: ((_ bucket: Int64, _ owners: Set<Int64>?) -> Void)?
    /// Signs items' photo URLs; without one, items show the placeholder.
    public var mediaSigner: (any MediaSigner)?

    package init(
        store: any BucketStore, work: LoopWork, clock: any Clock, social: Social, configuration: HubConfiguration
    ) {
        self.store = store
        self.work = work
        self.clock = clock
        self.social = social
        bucketsPerUser = configuration.bucketsPerUser
        itemsPerBucket = configuration.itemsPerBucket
    }

    // MARK: Buckets

    /// Creates a bucket owned by the caller.
    public func create(_ caller: Caller, name: String, privacy: String?, _ done: @escaping Outcome<BucketView>) {
        let checked: String
        let level: BucketPrivacy
        do throws(DomainError) {
            checked = try Self.checkName(name)
            level = try Self.checkPrivacy(privacy) ?? .private
        } catch { return done(.failure(error)) }
        let store = self.store
        let me = caller.user.id
        let now = clock.now()
        let limit = bucketsPerUser
        work.run(
            { () async throws(DomainError) -> BucketRecord in
                try await Self.storing {
                    try await store.createBucket(name: checked, privacy: level, owner: me, at: now, limit: limit)
                }
            },
            then: { result in
                done(result.map { BucketView(record: $0, role: .owner) })
                if case .success(let record) = result { self.announce(record.id, before: [], after: record) }
            })
    }

    /// Every bucket the caller can view, with the caller's role.
    public func list(_ caller: Caller, _ done: @escaping Outcome<[BucketView]>) {
        let store = self.store
        let me = caller.user.id
        let friends = social.friends(of: me)
        work.run(
            { () async throws(DomainError) -> [BucketView] in
                let found = try await Self.storing { try await store.buckets(member: me, friends: Array(friends)) }
                return found.compactMap { b in
                    Self.role(of: me, in: b, friends: friends).map { BucketView(record: b, role: $0) }
                }
            }, then: done)
    }

    /// One bucket and its items.
    public func get(_ caller: Caller, bucket: Int64, _ done: @escaping Outcome<(BucketView, [ItemView])>) {
        guard bucket > 0 else { return done(.failure(Self.badID("bucket"))) }
        let store = self.store
        let me = caller.user.id
        let friends = social.friends(of: me)
        work.run(
            { () async throws(DomainError) -> (BucketView, [ItemRecord]) in
                let (record, role) = try await Self.load(store, bucket, for: me, friends: friends)
                let items = try await Self.storing { try await store.items(bucket: bucket) }
                return (BucketView(record: record, role: role), items)
            },
            then: { result in
                let now = self.clock.now()
                done(result.map { view, items in (view, items.map { self.view($0, now: now) }) })
            })
    }

    /// Renames a bucket or changes its privacy (owners).
    public func update(
        _ caller: Caller, bucket: Int64, name: String?, privacy: String?, _ done: @escaping Outcome<BucketView>
    ) {
        guard bucket > 0 else { return done(.failure(Self.badID("bucket"))) }
        let newName: String?
        let level: BucketPrivacy?
        do throws(DomainError) {
            newName = try name.map { n throws(DomainError) in try Self.checkName(n) }
            level = try Self.checkPrivacy(privacy)
        } catch { return done(.failure(error)) }
        guard newName != nil || level != nil else {
            return done(.failure(.badRequest("give at least one of 'name' and 'privacy'")))
        }
        changeAsOwner(caller, bucket: bucket, doing: "change this bucket", done) { store in
            try await store.updateBucket(id: bucket, name: newName, privacy: level)
        }
    }

    /// Loads `bucket` as the caller sees it, refuses unless they own it, applies `change` in the store, answers
    /// with the bucket as changed and tells whoever gained, kept or lost the right to view it.
    private func changeAsOwner(
        _ caller: Caller, bucket: Int64, doing what: String, _ done: @escaping Outcome<BucketView>,
        _ change: @escaping @Sendable (any BucketStore) async throws -> BucketRecord?
    ) {
        let store = self.store
        let me = caller.user.id
        let friends = social.friends(of: me)
        work.run(
            { () async throws(DomainError) -> (BucketRecord, BucketRecord) in
                let (before, role) = try await Self.load(store, bucket, for: me, friends: friends)
                guard role == .owner else { throw Self.notOwner(what) }
                guard let after = try await Self.storing({ try await change(store) }) else {
                    throw Self.noBucket(bucket)
                }
                return (before, after)
            },
            then: { result in
                done(result.map { BucketView(record: $0.1, role: .owner) })
                if case .success(let (before, after)) = result {
                    self.announce(bucket, before: self.viewers(of: before), owners: Set(before.owners), after: after)
                }
            })
    }

    /// Deletes a bucket and its items (owners).
    public func delete(_ caller: Caller, bucket: Int64, _ done: @escaping Outcome<Int64>) {
        guard bucket > 0 else { return done(.failure(Self.badID("bucket"))) }
        let store = self.store
        let me = caller.user.id
        let friends = social.friends(of: me)
        work.run(
            { () async throws(DomainError) -> (BucketRecord, [Int64]) in
                let (record, role) = try await Self.load(store, bucket, for: me, friends: friends)
                guard role == .owner else { throw Self.notOwner("delete this bucket") }
                let items = try await Self.storing { try await store.items(bucket: bucket) }.map(\.id)
                try await Self.storing { try await store.deleteBucket(id: bucket) }
                return (record, items)
            },
            then: { result in
                done(result.map(\.0.id))
                if case .success(let (record, items)) = result {
                    if !items.isEmpty {
                        self.itemsGone?(items)
                        self.remote?.itemsGone(items)
                    }
                    self.announce(bucket, before: self.viewers(of: record), after: nil)
                }
            })
    }

    /// Shares a bucket with a friend as owner or viewer, or changes their role (owners).
    public func share(
        _ caller: Caller, bucket: Int64, user: Int64, role: String, _ done: @escaping Outcome<BucketView>
    ) {
        let me = caller.user.id
        guard bucket > 0 else { return done(.failure(Self.badID("bucket"))) }
        guard user > 0 else { return done(.failure(Self.badID("user"))) }
        guard let newRole = BucketRole(rawValue: role) else {
            return done(.failure(.badRequest("field 'role' must be 'owner' or 'viewer'")))
        }
        guard user != me else { return done(.failure(.badRequest("you cannot share a bucket with yourself"))) }
        guard social.areFriends(me, user) else {
            return done(
                .failure(DomainError(.notFriends, "you can only share with friends; user \(user) is not your friend")))
        }
        changeAsOwner(caller, bucket: bucket, doing: "share this bucket", done) { store in
            try await store.setMember(bucket: bucket, user: user, role: newRole)
        }
    }

    /// Takes a member out of a bucket: owners remove anyone but the last owner; anyone may leave.
    public func unshare(_ caller: Caller, bucket: Int64, user: Int64, _ done: @escaping Outcome<Int64>) {
        guard bucket > 0 else { return done(.failure(Self.badID("bucket"))) }
        guard user > 0 else { return done(.failure(Self.badID("user"))) }
        let store = self.store
        let me = caller.user.id
        let friends = social.friends(of: me)
        work.run(
            { () async throws(DomainError) -> (BucketRecord, BucketRecord) in
                let (before, role) = try await Self.load(store, bucket, for: me, friends: friends)
                guard role == .owner || user == me else { throw Self.notOwner("unshare this bucket") }
                guard let theirs = before.members[user] else {
                    throw DomainError(.notFound, "user \(user) is not a member of bucket \(bucket)")
                }
                if theirs == .owner && before.owners.count == 1 {
                    throw DomainError.badRequest("a bucket keeps at least one owner; delete it instead")
                }
                guard
                    let after = try await Self.storing({ try await store.removeMember(bucket: bucket, user: user) })
                else { throw Self.noBucket(bucket) }
                return (before, after)
            },
            then: { result in
                done(result.map { $0.1.id })
                if case .success(let (before, after)) = result {
                    self.announce(bucket, before: self.viewers(of: before), owners: Set(before.owners), after: after)
                }
            })
    }

    // MARK: Items

    /// Adds an item (owners).
    public func createItem(
        _ caller: Caller, bucket: Int64, name: String, photo: String?, note: String?,
        _ done: @escaping Outcome<ItemView>
    ) {
        guard bucket > 0 else { return done(.failure(Self.badID("bucket"))) }
        let me = caller.user.id
        let checkedName: String
        let checkedNote: String?
        let checkedPhoto: String?
        do throws(DomainError) {
            checkedName = try Self.checkName(name)
            checkedNote = try note.map { n throws(DomainError) in try Self.checkNote(n) }.flatMap { $0 }
            checkedPhoto = try photo.map { p throws(DomainError) in try Self.checkPhoto(p) }.flatMap { $0 }
        } catch { return done(.failure(error)) }
        let store = self.store
        let friends = social.friends(of: me)
        let now = clock.now()
        let limit = itemsPerBucket
        work.run(
            { () async throws(DomainError) -> ItemRecord in
                let (_, role) = try await Self.load(store, bucket, for: me, friends: friends)
                guard role == .owner else { throw DomainError(.notOwner, Self.notOwnerAdd) }
                let media = checkedPhoto.map { MediaRef(id: $0, owner: me) }
                return try await Self.storing {
                    try await store.createItem(
                        bucket: bucket, name: checkedName, note: checkedNote, photo: media, at: now, limit: limit)
                }
            },
            then: { result in
                done(result.map { self.view($0, now: self.clock.now()) })
                if case .success = result { self.changed(bucket) }
            })
    }

    /// Changes an item: owners change anything, viewers only `done`.
    public func updateItem(_ caller: Caller, item: Int64, changes: ItemChanges, _ done: @escaping Outcome<ItemView>) {
        guard item > 0 else { return done(.failure(Self.badID("item"))) }
        var checked = changes
        do throws(DomainError) {
            checked.name = try changes.name.map { n throws(DomainError) in try Self.checkName(n) }
            if let note = changes.note { checked.note = try Self.checkNote(note) ?? "" }
            if let photo = changes.photo { checked.photo = try Self.checkPhoto(photo) ?? "" }
        } catch { return done(.failure(error)) }
        guard !checked.isEmpty else {
            return done(
                .failure(.badRequest("give at least one of 'name', 'note', 'photo', 'done', 'hidden' and 'alert'")))
        }
        let store = self.store
        let me = caller.user.id
        let friends = social.friends(of: me)
        let changes = checked
        let since = epochs.begin()
        work.run(
            { () async throws(DomainError) -> (ItemRecord, BucketRecord) in
                guard let found = try await Self.storing({ try await store.item(id: item) }) else {
                    throw Self.noItem(item)
                }
                let bucket: BucketRecord
                let role: BucketRole
                do throws(DomainError) {
                    (bucket, role) = try await Self.load(store, found.bucket, for: me, friends: friends)
                } catch  where error.code == .notFound { throw Self.noItem(item) }
                guard role == .owner || changes.onlyDone else {
                    throw DomainError(
                        .notOwner, "You are not an owner of this bucket so therefore you can only mark the item done.")
                }
                guard
                    let updated = try await Self.storing({
                        try await store.updateItem(id: item, changes: changes, by: me)
                    })
                else { throw Self.noItem(item) }
                return (updated, bucket)
            },
            then: { result in
                // The owners were read before the write: an owner change announced since makes them stale.
                let stale = result.map { self.epochs.isStale(since: since, bucket: $0.1) }
                self.epochs.end()
                done(result.map { self.view($0.0, now: self.clock.now()) })
                if case .success(let (updated, bucket)) = result {
                    self.epochs.itemChanged(updated.id)  // hidden or not: reads begun before are stale
                    if (try? stale.get()) == false {
                        self.itemChanged?(updated, Set(bucket.owners))
                    } else {
                        self.currentOwners(of: updated, since: self.epochs.now) { self.itemChanged?(updated, $0) }
                    }
                    self.changed(updated.bucket)
                }
            })
    }

    /// Deletes an item (owners).
    public func deleteItem(_ caller: Caller, item: Int64, _ done: @escaping Outcome<Int64>) {
        guard item > 0 else { return done(.failure(Self.badID("item"))) }
        let store = self.store
        let me = caller.user.id
        let friends = social.friends(of: me)
        work.run(
            { () async throws(DomainError) -> ItemRecord in
                guard let found = try await Self.storing({ try await store.item(id: item) }) else {
                    throw Self.noItem(item)
                }
                let role: BucketRole
                do throws(DomainError) {
                    role = try await Self.load(store, found.bucket, for: me, friends: friends).1
                } catch  where error.code == .notFound { throw Self.noItem(item) }
                guard role == .owner else { throw DomainError(.notOwner, Self.notOwnerDelete) }
                try await Self.storing { try await store.deleteItem(id: item) }
                return found
            },
            then: { result in
                done(result.map(\.id))
                if case .success(let found) = result {
                    self.itemsGone?([found.id])
                    self.remote?.itemsGone([found.id])
                    self.changed(found.bucket)
                }
            })
    }

    /// The owners of `item`'s bucket as they are now, read again while reads come back stale; `done` is not called
    /// when the bucket is gone or `item` changed after `since` (a later change is told on its own).
    private func currentOwners(
        of item: ItemRecord, since: Int64, attempt: Int = 0, _ done: @escaping (Set<Int64>) -> Void
    ) {
        let store = self.store
        let begun = epochs.begin()
        work.run(
            { () async throws(DomainError) -> BucketRecord? in
                try await Self.storing { try await store.bucket(id: item.bucket) }
            },
            then: { result in
                let bucket = try? result.get()
                let changed = self.epochs.itemChanged(item.id, since: since)
                let stale = bucket.map { self.epochs.isStale(since: begun, bucket: $0) } ?? false
                self.epochs.end()
                guard let bucket, !changed else { return }
                if stale {
                    guard attempt < Self.staleRetries else { return }  // the owner change announced keeps them
                    return self.currentOwners(of: item, since: since, attempt: attempt + 1, done)
                }
                done(Set(bucket.owners))
            })
    }

    // MARK: Items for other features

    /// The caller's access to items, to be asked off the loop (trackers check ownership through it).
    public func itemAccess(for caller: Caller) -> ItemAccess {
        ItemAccess(store: store, user: caller.user.id, friends: social.friends(of: caller.user.id))
    }

    /// Every item with `alert` on and its owners, read from the store; `done` runs on the loop (the trackers' resync
    /// of left-behind alerts).
    package func readItemAlerts(_ done: @escaping (Result<[ItemAlertRecord], DomainError>) -> Void) {
        let store = self.store
        work.run(
            { () async throws(DomainError) -> [ItemAlertRecord] in
                try await LoopWork.storage { try await store.itemAlerts() }
            },
            then: done)
    }

    /// Who may hear where the item is now (nil when the item or its bucket is gone), read from the store; `done`
    /// runs on the loop, with the viewers worked out there.
    /// A read that comes back stale (`AccessEpochs`) is read again, up to `staleRetries` times, then given up (nil).
    package func audience(ofItem item: Int64, attempt: Int = 0, _ done: @escaping (ItemAudience?) -> Void) {
        let store = self.store
        let since = epochs.begin()
        work.run(
            { () async throws(DomainError) -> (ItemRecord, BucketRecord)? in
                guard let found = try await Self.storing({ try await store.item(id: item) }) else { return nil }
                return try await Self.storing { try await store.bucket(id: found.bucket) }.map { (found, $0) }
            },
            then: { result in
                guard case .success(.some(let (found, bucket))) = result else {
                    self.epochs.end()
                    return done(nil)
                }
                let stale = self.epochs.isStale(since: since, bucket: bucket, item: item)
                self.epochs.end()
                if stale {
                    guard attempt < Self.staleRetries else { return done(nil) }
                    return self.audience(ofItem: item, attempt: attempt + 1, done)
                }
                done(ItemAudience(item: found, owners: Set(bucket.owners), viewers: self.viewers(of: bucket)))
            })
    }

    /// Every item the caller can view, with the caller's role in its bucket worked out on the loop when the read comes
    /// back (with the caller's friends then). A bucket whose access changed while the read was in flight makes the
    /// read stale: it is read again up to `staleRetries` times, then that bucket's items are left out.
    package func viewableItems(
        _ caller: Caller, attempt: Int = 0, _ done: @escaping Outcome<[(item: ItemRecord, role: BucketRole)]>
    ) {
        viewableItems(of: caller.user.id, attempt: attempt, done)
    }

    /// Every item `me` can view (see `viewableItems(_:attempt:_:)`).
    package func viewableItems(
        of me: Int64, attempt: Int = 0, _ done: @escaping Outcome<[(item: ItemRecord, role: BucketRole)]>
    ) {
        let store = self.store
        let friends = social.friends(of: me)
        let since = epochs.begin()
        work.run(
            { () async throws(DomainError) -> [(BucketRecord, [ItemRecord])] in
                let found = try await Self.storing { try await store.buckets(member: me, friends: Array(friends)) }
                var items: [(BucketRecord, [ItemRecord])] = []
                for bucket in found where Self.role(of: me, in: bucket, friends: friends) != nil {
                    items.append((bucket, try await Self.storing { try await store.items(bucket: bucket.id) }))
                }
                return items
            },
            then: { result in
                let epochs = self.epochs
                let found = result.map { buckets in
                    buckets.map { bucket, items in
                        (bucket, items, items.contains { epochs.isStale(since: since, bucket: bucket, item: $0.id) })
                    }
                }
                self.epochs.end()
                guard case .success(let buckets) = found else { return done(result.map { _ in [] }) }
                if attempt < Self.staleRetries, buckets.contains(where: \.2) {
                    return self.viewableItems(of: me, attempt: attempt + 1, done)
                }
                let now = self.social.friends(of: me)
                var items: [(item: ItemRecord, role: BucketRole)] = []
                for (bucket, inside, stale) in buckets where !stale {
                    guard let role = Self.role(of: me, in: self.epochs.pending(bucket), friends: now) else { continue }
                    items += inside.map { ($0, role) }
                }
                done(.success(items))
            })
    }

    /// The item and the caller's role in its bucket, worked out on the loop when the read comes back (with the
    /// caller's friends then): `not_found` when the caller cannot view it. A read that comes back stale is read again
    /// up to `staleRetries` times; after that it is answered with `stale` true, and nothing that depends on who may
    /// see the item (its position) may go out on it.
    package func itemRole(
        _ caller: Caller, item: Int64, attempt: Int = 0,
        _ done: @escaping Outcome<(item: ItemRecord, role: BucketRole, stale: Bool)>
    ) {
        let store = self.store
        let me = caller.user.id
        let since = epochs.begin()
        work.run(
            { () async throws(DomainError) -> (ItemRecord, BucketRecord)? in
                guard let found = try await Self.storing({ try await store.item(id: item) }) else { return nil }
                return try await Self.storing { try await store.bucket(id: found.bucket) }.map { (found, $0) }
            },
            then: { result in
                let stale = result.map { $0.map { self.epochs.isStale(since: since, bucket: $0.1, item: item) } }
                self.epochs.end()
                let noItem = Self.noItem(item)
                switch (result, stale) {
                case (.failure(let error), _): done(.failure(error))
                case (.success(nil), _): done(.failure(noItem))
                case (.success(.some(let (found, bucket))), let stale):
                    let isStale = (try? stale.get()) == true
                    if isStale && attempt < Self.staleRetries {
                        return self.itemRole(caller, item: item, attempt: attempt + 1, done)
                    }
                    let friends = self.social.friends(of: me)
                    guard let role = Self.role(of: me, in: self.epochs.pending(bucket), friends: friends) else {
                        return done(.failure(noItem))
                    }
                    done(.success((found, role, isStale)))
                }
            })
    }

    // MARK: Friendships

    /// `a` and `b` are no longer friends (committed): each loses the viewer shares in the other's buckets, and
    /// whoever could view a bucket only through the friendship hears `bucket.removed`.
    package func friendshipEnded(_ a: Int64, _ b: Int64) {
        let store = self.store
        epochs.friendshipEnding(a, b)  // until the shares' removal commits, reads leave them out
        work.run(
            { () async throws(DomainError) -> [(BucketRecord, Int64)] in
                // The buckets each could view through the other, as they were, and who may have lost them.
                var touched: [(BucketRecord, Int64)] = []
                for (owner, other) in [(a, b), (b, a)] {
                    let owned = try await Self.storing { try await store.buckets(ownedBy: owner) }
                    let viewerOf = Set(
                        try await Self.storing { try await store.removeViewer(other, fromBucketsOwnedBy: owner) })
                    for bucket in owned
                    where viewerOf.contains(bucket.id) || (bucket.privacy == .friends && bucket.members[other] == nil) {
                        touched.append((bucket, other))
                    }
                }
                return touched
            },
            then: { result in
                self.epochs.friendshipEnded(a, b)  // reads begun before the removal committed are stale
                guard case .success(let touched) = result else { return }
                for (before, other) in touched {
                    var after = before
                    if after.members[other] == .viewer { after.members[other] = nil }
                    if self.viewers(of: after).contains(other) { continue }
                    self.accessLost?(before.id, [other])
                    self.tell(.bucketRemoved(bucket: before.id), [other])
                    if before.members[other] != nil { self.changed(before.id, viewers: self.viewers(of: after)) }
                }
            })
    }

    /// `a` and `b`'s friendship ended through another node, which removed the shares and told whoever lost a bucket
    /// (so nothing is written or told here): reads of who may see items begun before are stale, and what the two
    /// follow here is read again.
    package func friendshipEndedElsewhere(_ a: Int64, _ b: Int64) {
        epochs.ownerChanged(a)
        epochs.ownerChanged(b)
        viewsChanged?([a, b])
    }

    // MARK: Who can view

    /// The role `user` has in `bucket`: a member's, or viewer through a friend who owns a `friends` bucket.
    static func role(of user: Int64, in bucket: BucketRecord, friends: Set<Int64>) -> BucketRole? {
        if let role = bucket.members[user] { return role }
        if bucket.privacy == .friends && bucket.owners.contains(where: friends.contains) { return .viewer }
        return nil
    }

    /// Everyone who can view `bucket` now.
    private func viewers(of record: BucketRecord) -> Set<Int64> {
        let bucket = epochs.pending(record)
        var all = Set(bucket.members.keys)
        if bucket.privacy == .friends {
            for owner in bucket.owners { all.formUnion(social.friends(of: owner)) }
        }
        return all
    }

    /// Tells those who lost sight of a bucket that it is gone to them, and those who see it that it changed. Those
    /// who lost it, and owners demoted (hidden items are for owners), have its items' pending positions withdrawn.
    private func announce(_ bucket: Int64, before: Set<Int64>, owners: Set<Int64> = [], after: BucketRecord?) {
        epochs.bucketChanged(bucket)  // reads begun before are stale
        let owning = after.map { Set($0.owners) }
        ownersChanged?(bucket, owning)
        let now = after.map(viewers(of:)) ?? []
        let lost = before.subtracting(now)
        let withdrawn = lost.union(owners.subtracting(owning ?? []))
        if !withdrawn.isEmpty { accessLost?(bucket, withdrawn) }
        if !lost.isEmpty { tell(.bucketRemoved(bucket: bucket), lost.sorted()) }
        changed(bucket, viewers: now)
    }

    /// Pushes `bucket.changed` to everyone who can view it, read from the store first.
    package func changed(_ bucket: Int64) {
        let store = self.store
        work.run(
            { () async throws(DomainError) -> BucketRecord? in
                try await Self.storing { try await store.bucket(id: bucket) }
            },
            then: { result in
                if case .success(.some(let record)) = result { self.changed(bucket, viewers: self.viewers(of: record)) }
            })
    }

    private func changed(_ bucket: Int64, viewers: Set<Int64>) {
        remote?.bucketTouched(bucket)  // every committed change of a bucket comes here, its deletion too
        guard !viewers.isEmpty else { return }
        tell(.bucketChanged(bucket: bucket), viewers.sorted())
    }

    /// Tells `users` that a bucket changed or went; whatever follows their view of buckets hears of it.
    private func tell(_ event: HubEvent, _ users: [Int64]) {
        events?.publish(event, toUsers: users, excluding: nil)
        viewsChanged?(users)
    }

    // MARK: Views

    private func view(_ item: ItemRecord, now: Int64) -> ItemView {
        if let photo = item.photo, let signer = mediaSigner {
            return ItemView(record: item, photoURL: signer.url(for: photo.id, now: now), placeholderURL: nil)
        }
        return ItemView(record: item, photoURL: nil, placeholderURL: Placeholders.item)
    }

    // MARK: Checks

    static func load(
        _ store: any BucketStore, _ id: Int64, for user: Int64, friends: Set<Int64>
    ) async throws(DomainError) -> (BucketRecord, BucketRole) {
        guard let record = try await storing({ try await store.bucket(id: id) }),
            let role = role(of: user, in: record, friends: friends)
        else { throw noBucket(id) }
        return (record, role)
    }

    static func storing<T>(_ body: () async throws -> T) async throws(DomainError) -> T {
        do { return try await body() } catch BucketStoreError.mediaNotFound {
            throw DomainError(.notFound, "field 'photo' names no media uploaded by you")
        } catch BucketStoreError.tooManyBuckets(let limit) {
            throw DomainError.badRequest("you already own \(limit) buckets, the most allowed; delete one first")
        } catch BucketStoreError.tooManyItems(let limit) {
            throw DomainError.badRequest("this bucket already holds \(limit) items, the most allowed; delete one first")
        } catch {
            hubLogger.error("storage failure: \(error)")
            throw DomainError.storage(error)
        }
    }

    static func checkName(_ raw: String) throws(DomainError) -> String {
        let name = raw.trimmingWhitespace()
        guard !name.isEmpty else { throw .badRequest("field 'name' must not be empty") }
        guard name.utf8.count <= nameLimit else {
            throw .badRequest("field 'name' must be at most \(nameLimit) bytes (UTF-8)")
        }
        return name
    }

    /// Nil for an empty note (none).
    static func checkNote(_ note: String) throws(DomainError) -> String? {
        guard note.utf8.count <= noteLimit else {
            throw .badRequest("field 'note' must be at most \(noteLimit) bytes (UTF-8)")
        }
        return note.trimmingWhitespace().isEmpty ? nil : note
    }

    /// Nil for an empty photo (none).
    static func checkPhoto(_ photo: String) throws(DomainError) -> String? {
        guard !photo.isEmpty else { return nil }
        guard photo.utf8.count <= 128, photo.utf8.allSatisfy({ $0 < 128 && ($0 == 45 || $0 == 95 || isAlnum($0)) })
        else { throw .badRequest("field 'photo' must be a media id from an upload") }
        return photo
    }

    private static func isAlnum(_ c: UInt8) -> Bool {
        (48...57).contains(c) || (65...90).contains(c) || (97...122).contains(c)
    }

    static func checkPrivacy(_ raw: String?) throws(DomainError) -> BucketPrivacy? {
        guard let raw else { return nil }
        guard let level = BucketPrivacy(rawValue: raw) else {
            throw .badRequest("field 'privacy' must be 'private' or 'friends'")
        }
        return level
    }

    private static func badID(_ field: String) -> DomainError { .badRequest("field '\(field)' must be a positive id") }
    private static func noBucket(_ id: Int64) -> DomainError { DomainError(.notFound, "no bucket \(id)") }
    private static func noItem(_ id: Int64) -> DomainError { DomainError(.notFound, "no item \(id)") }
    private static func notOwner(_ what: String) -> DomainError {
        DomainError(.notOwner, "You are not an owner of this bucket so therefore you cannot \(what).")
    }
}
