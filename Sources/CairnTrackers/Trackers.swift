// Trackers (seed 002): `tracker.pair` binds a device's unique id to an item and hands out the tracker's secret key
// once; `tracker.activate` / `tracker.deactivate` turn its reports on and off; `tracker.unpair` removes it;
// `tracker.list` shows a bucket's trackers with who paired each. Only owners of the item's bucket may do any of these,
// whoever paired the tracker; a viewer gets `not_owner`, anyone else `not_found` (an item or a tracker the caller
// cannot view is never revealed). A tracker is paired inactive: the seed's app pairs, then activates, and only an
// active tracker's reports are accepted — and only while its pairer is still an owner of the bucket (the store
// decides it on every read: `TrackerRecord.pairerLeft`).
//
// The key is base64url of 32 random bytes from the injected random source; the store keeps only its SHA-256, so a
// leaked database does not let anyone report as a tracker. Trackers keep nothing in memory: each op checks the
// caller's role through `Buckets.itemAccess`, then commits one store call before the reply.
//
// Live positions (`Trackers+Positions`): each item's latest fix, in memory and in the tracker layer of a spatial
// index of its own, and who watches items (`items.watch`). Finding an item (`Trackers+Locate`): where it is, how far
// from the caller, and directions. Left behind (`Trackers+LeftBehind`): the alert rule per item and owner. The
// caller's own position, the owners' trusted positions and their safe zones are asked through hooks the hub wires
// (`userFix`, `ownerFix`, `shelters`).
package import CairnBuckets
public import CairnCore
package import CairnCrypto
import CairnErrorCodes
package import CairnGeo
package import CairnLoop
import CairnSessions
import CairnSpatial
import Logging

/// The tracker ops. Loop thread only.
public final class Trackers {
    /// Longest device id, in bytes.
    public static let deviceLimit = 64

    let store: any TrackerStore
    let work: LoopWork
    let clock: any Clock
    private let random: any RandomSource
    let buckets: Buckets
    package var events: (any HubEvents)?
    /// Each item's latest fix (shared with `Trackers+Positions`, read by nobody else).
    var latest: [Int64: Fix] = [:]
    /// The tracker layer: items by where their tracker last was.
    var index: LayeredIndex
    /// Connections watching items, by user, and the user of each.
    var watchers: [Int64: Set<ConnectionID>] = [:]
    var watcherOf: [ConnectionID: Int64] = [:]
    /// Items whose `item.pos` went out, by bucket, and the bucket of each: what to withdraw when access is lost.
    var pushed: [Int64: Set<Int64>] = [:]
    var pushedIn: [Int64: Int64] = [:]
    /// Trackers unpaired and items deleted during this run: a fix the ingest committed before, brought to the loop
    /// after, is ignored (ids are AUTOINCREMENT, never reused; a few bytes per unpair or deletion until restart).
    var unpaired: Set<Int64> = []
    var deleted: Set<Int64> = []
    /// Several nodes (`Trackers+Remote`): item moves for viewers elsewhere and from trackers reporting elsewhere
    /// (nil: a single node), who is online on another node and which connections are open (wired by the hub), and the
    /// items each watching
    /// connection here follows.
    package var remote: (any RemoteItems)?
    package var onlineElsewhere: ((Int64) -> Bool)?
    package var connectionOpen: ((ConnectionID) -> Bool)?
    var following: [ConnectionID: [Int64]] = [:]
    /// Users whose followed items are being read again, and whether another read was asked for meanwhile.
    var refollowing: [Int64: Bool] = [:]
    /// Several nodes, left-behind alerts (`Trackers+RemoteAlerts`): the (item, owner) pairs followed because the
    /// owner is connected here, items whose position here is not yet known to be current, buckets being read again
    /// after a change elsewhere (and whether another change came meanwhile), and who is connected here (wired).
    var alertFollowed: Set<ItemOwner> = []
    var unverified: Set<Int64> = []
    var bucketReads: [Int64: Bool] = [:]
    /// Moves on with every change of alert state made or applied here (a catch-up read overtaken by one is dropped).
    var alertChanges: UInt64 = 0
    package var onlineHere: ((Int64) -> Bool)?

    /// A user's latest position (the live map's), wired by the hub.
    package var userFix: ((Int64) -> Fix?)?
    /// An owner's trusted position (confirmed in the session), for left-behind alerts.
    package var ownerFix: ((Int64) -> Fix?)?
    /// True when a point lies in one of the user's safe zones, wired by the hub.
    package var shelters: ((_ owner: Int64, _ point: GeoPoint) -> Bool)?
    /// Walking directions up to this distance (m), transit beyond.
    let walkingDistance: Double
    /// The left-behind distance (m) and grace time (ms).
    let leftBehindDistance: Double
    let leftBehindGraceMs: Int64
    /// Items with `alert` on, with their bucket and its owners (`Trackers+LeftBehind`).
    var alerting: [Int64: ItemAlertRecord] = [:]
    /// The items with `alert` on each owner owns.
    var alertsOf: [Int64: Set<Int64>] = [:]
    /// The items with `alert` on in each bucket.
    var alertsIn: [Int64: Set<Int64>] = [:]
    /// The left-behind state of each (item, owner) pair that is pending or alerted.
    var leftBehind: [ItemOwner: LeftBehind] = [:]
    /// The pairs waiting out the grace time (the tick looks at these alone).
    var waiting: Set<ItemOwner> = []

    package init(
        store: any TrackerStore, work: LoopWork, clock: any Clock, random: any RandomSource, buckets: Buckets,
        configuration: HubConfiguration
    ) {
        self.store = store
        self.work = work
        self.clock = clock
        self.random = random
        self.buckets = buckets
        index = LayeredIndex(cellSize: configuration.indexCellSize)
        walkingDistance = configuration.walkingDistance
        leftBehindDistance = configuration.leftBehindDistance
        leftBehindGraceMs = configuration.leftBehindGraceMs
    }

    /// Binds `device` to `item` (owners of its bucket) and returns the tracker with its key, shown this once.
    public func pair(_ caller: Caller, item: Int64, device: String, _ done: @escaping Outcome<PairedTracker>) {
        guard item > 0 else { return done(.failure(.badRequest("field 'item' must be a positive id"))) }
        guard Self.isDeviceID(device) else {
            return done(
                .failure(
                    .badRequest("field 'device' must be 1-\(Self.deviceLimit) characters of A-Z a-z 0-9 . _ : -")))
        }
        let store = self.store
        let access = buckets.itemAccess(for: caller)
        let raw = random.bytes(32)
        let digest = Digest.sha256(raw)
        let now = clock.now()
        let me = caller.user.id
        work.run(
            { () async throws(DomainError) -> (TrackerRecord, Int64) in
                let (found, role) = try await access.role(item: item)
                guard role == .owner else { throw Self.notOwner("pair a tracker with this item") }
                let paired = try await Self.storing(item: item, device: device) {
                    try await store.pairTracker(item: item, device: device, keyDigest: digest, by: me, at: now)
                }
                return (paired, found.bucket)
            },
            then: { result in
                done(result.map { PairedTracker(record: $0.0, key: Base64URL.encode(raw)) })
                if case .success(let (_, bucket)) = result { self.buckets.changed(bucket) }  // the item's `tracker`
            })
    }

    /// Accepts the tracker's reports from now on (owners).
    public func activate(_ caller: Caller, tracker: Int64, _ done: @escaping Outcome<TrackerRecord>) {
        setActive(caller, tracker: tracker, active: true, done)
    }

    /// Refuses the tracker's reports from now on (owners).
    public func deactivate(_ caller: Caller, tracker: Int64, _ done: @escaping Outcome<TrackerRecord>) {
        setActive(caller, tracker: tracker, active: false, done)
    }

    /// Whether the tracker's device is shown the other items of its item's bucket (owners; off when paired).
    public func showItems(_ caller: Caller, tracker: Int64, show: Bool, _ done: @escaping Outcome<TrackerRecord>) {
        change(caller, tracker: tracker, what: "change what this tracker is shown", done) { store in
            try await store.setTrackerShowsItems(id: tracker, shows: show)
        }
    }

    /// Removes a tracker (owners); its device id may be paired again.
    public func unpair(_ caller: Caller, tracker: Int64, _ done: @escaping Outcome<Int64>) {
        guard tracker > 0 else { return done(.failure(Self.badID)) }
        let store = self.store
        let access = buckets.itemAccess(for: caller)
        work.run(
            { () async throws(DomainError) -> (TrackerRecord, Int64) in
                let (found, item) = try await Self.owned(tracker, store: store, access: access, "unpair this tracker")
                guard try await Self.storing({ try await store.unpairTracker(id: tracker) }) else {
                    throw Self.noTracker(tracker)
                }
                return (found, item.bucket)
            },
            then: { result in
                done(result.map(\.0.id))
                if case .success(let (found, bucket)) = result {
                    self.unpaired.insert(found.id)  // a fix committed before the unpair stays out
                    self.forget(item: found.item)
                    self.buckets.changed(bucket)
                }
            })
    }

    /// Every tracker on the items of `bucket`, with who paired each (owners).
    public func list(_ caller: Caller, bucket: Int64, _ done: @escaping Outcome<[TrackerRecord]>) {
        guard bucket > 0 else { return done(.failure(.badRequest("field 'bucket' must be a positive id"))) }
        let store = self.store
        let access = buckets.itemAccess(for: caller)
        work.run(
            { () async throws(DomainError) -> [TrackerRecord] in
                let role = try await access.role(bucket: bucket)
                guard role == .owner else { throw Self.notOwner("list its trackers") }
                return try await Self.storing { try await store.trackers(bucket: bucket) }
            }, then: done)
    }

    /// The digest a key is stored as, or nil when the text cannot be a key this hub issued.
    public static func keyDigest(_ key: String) -> [UInt8]? { Accounts.tokenDigest(key) }

    private func setActive(_ caller: Caller, tracker: Int64, active: Bool, _ done: @escaping Outcome<TrackerRecord>) {
        let what = active ? "activate this tracker" : "deactivate this tracker"
        change(caller, tracker: tracker, what: what, done) { store in
            try await store.setTrackerActive(id: tracker, active: active)
        }
    }

    /// Checks the caller owns the tracker's item, then commits `write` (nil: the tracker went meanwhile).
    private func change(
        _ caller: Caller, tracker: Int64, what: String, _ done: @escaping Outcome<TrackerRecord>,
        write: @escaping @Sendable (any TrackerStore) async throws -> TrackerRecord?
    ) {
        guard tracker > 0 else { return done(.failure(Self.badID)) }
        let store = self.store
        let access = buckets.itemAccess(for: caller)
        work.run(
            { () async throws(DomainError) -> TrackerRecord in
                _ = try await Self.owned(tracker, store: store, access: access, what)
                guard let updated = try await Self.storing({ try await write(store) }) else {
                    throw Self.noTracker(tracker)
                }
                return updated
            }, then: done)
    }

    // MARK: Checks

    /// The tracker and its item, when the caller owns the item's bucket; `not_found` when the caller cannot view it.
    private static func owned(
        _ id: Int64, store: any TrackerStore, access: ItemAccess, _ what: String
    ) async throws(DomainError) -> (TrackerRecord, ItemRecord) {
        guard let found = try await storing({ try await store.tracker(id: id) }) else { throw noTracker(id) }
        let item: ItemRecord
        let role: BucketRole
        do throws(DomainError) {
            (item, role) = try await access.role(item: found.item)
        } catch  where error.code == .notFound { throw noTracker(id) }
        guard role == .owner else { throw notOwner(what) }
        return (found, item)
    }

    /// True for 1-64 characters of `A-Za-z0-9._:-`.
    static func isDeviceID(_ text: String) -> Bool {
        let bytes = text.utf8
        guard !bytes.isEmpty, bytes.count <= deviceLimit else { return false }
        return bytes.allSatisfy { c in
            (48...57).contains(c) || (65...90).contains(c) || (97...122).contains(c) || c == 46 || c == 95 || c == 58
                || c == 45
        }
    }

    private static func storing<T>(
        item: Int64 = 0, device: String = "", _ body: () async throws -> T
    ) async throws(DomainError) -> T {
        do { return try await body() } catch TrackerStoreError.deviceTaken {
            throw DomainError(.deviceTaken, "device '\(device)' is already paired with an item")
        } catch TrackerStoreError.itemTaken {
            throw DomainError.badRequest("item \(item) already has a tracker; unpair it first")
        } catch TrackerStoreError.itemNotFound {
            throw DomainError(.notFound, "no item \(item)")
        } catch {
            hubLogger.error("storage failure: \(error)")
            throw DomainError.storage(error)
        }
    }

    private static let badID = DomainError.badRequest("field 'tracker' must be a positive id")
    private static func noTracker(_ id: Int64) -> DomainError { DomainError(.notFound, "no tracker \(id)") }
    private static func notOwner(_ what: String) -> DomainError {
        DomainError(.notOwner, "You are not an owner of this bucket so therefore you cannot \(what).")
    }
}
