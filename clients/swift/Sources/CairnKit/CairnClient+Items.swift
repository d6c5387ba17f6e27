// Buckets, items, trackers and safe zones (docs/PROTOCOL.md, "Buckets and items", "Trackers"): shared collections,
// the devices that report an item's position over HTTP ingest, watching and locating items, left-behind alerts.
import Foundation

extension CairnClient {
    private struct BucketReply: Decodable { var bucket: Bucket }
    private struct BucketsReply: Decodable { var buckets: [Bucket] }
    private struct BucketItemsReply: Decodable {
        var bucket: Bucket
        var items: [Item]
    }
    private struct ItemReply: Decodable { var item: Item }
    private struct TrackerReply: Decodable { var tracker: Tracker }
    private struct TrackersReply: Decodable { var trackers: [Tracker] }
    private struct ZoneReply: Decodable { var zone: SafeZone }
    private struct ZonesReply: Decodable { var zones: [SafeZone] }

    /// The changes ``updateItem(_:_:)`` makes; a `nil` field is left as it is.
    public struct ItemChanges: Sendable, Hashable, Encodable {
        /// A new name.
        public var name: String?
        /// A new note; empty removes it.
        public var note: String?
        /// A media id of yours; empty removes the photo.
        public var photo: String?
        /// Ticked off or on (the only change a viewer may make).
        public var done: Bool?
        /// Keep the position for the bucket's owners only.
        public var hidden: Bool?
        /// Left-behind alerts for its owners.
        public var alert: Bool?

        /// Changes to make.
        public init(
            name: String? = nil, note: String? = nil, photo: String? = nil, done: Bool? = nil, hidden: Bool? = nil,
            alert: Bool? = nil
        ) {
            self.name = name
            self.note = note
            self.photo = photo
            self.done = done
            self.hidden = hidden
            self.alert = alert
        }
    }

    /// Creates a bucket you own (`bucket.create`); `privacy` is `private` (default) or `friends`.
    public func createBucket(name: String, privacy: String? = nil) async throws -> Bucket {
        var fields: [String: JSONValue] = ["name": .string(name)]
        if let privacy { fields["privacy"] = .string(privacy) }
        return try await request("bucket.create", fields, as: BucketReply.self).bucket
    }

    /// Every bucket you can view, oldest first (`bucket.list`).
    public func buckets() async throws -> [Bucket] {
        try await request("bucket.list", as: BucketsReply.self).buckets
    }

    /// A bucket and its items, oldest first (`bucket.get`).
    public func bucket(_ id: Int64) async throws -> (bucket: Bucket, items: [Item]) {
        let reply = try await request("bucket.get", ["bucket": .int(id)], as: BucketItemsReply.self)
        return (reply.bucket, reply.items)
    }

    /// Renames a bucket or changes its privacy (`bucket.update`, owners).
    public func updateBucket(_ id: Int64, name: String? = nil, privacy: String? = nil) async throws -> Bucket {
        var fields: [String: JSONValue] = ["bucket": .int(id)]
        if let name { fields["name"] = .string(name) }
        if let privacy { fields["privacy"] = .string(privacy) }
        return try await request("bucket.update", fields, as: BucketReply.self).bucket
    }

    /// Deletes a bucket with its items (`bucket.delete`, owners).
    public func deleteBucket(_ id: Int64) async throws {
        try await request("bucket.delete", ["bucket": .int(id)])
    }

    /// Shares a bucket with a friend as `owner` or `viewer` (`bucket.share`, owners).
    public func shareBucket(_ id: Int64, with user: Int64, role: String) async throws -> Bucket {
        let fields: [String: JSONValue] = ["bucket": .int(id), "user": .int(user), "role": .string(role)]
        return try await request("bucket.share", fields, as: BucketReply.self).bucket
    }

    /// Removes a member, or yourself, from a bucket (`bucket.unshare`).
    public func unshareBucket(_ id: Int64, user: Int64) async throws {
        try await request("bucket.unshare", ["bucket": .int(id), "user": .int(user)])
    }

    /// Adds an item to a bucket you own (`item.create`).
    public func createItem(in bucket: Int64, name: String, note: String? = nil, photo: String? = nil) async throws
        -> Item
    {
        var fields: [String: JSONValue] = ["bucket": .int(bucket), "name": .string(name)]
        if let note { fields["note"] = .string(note) }
        if let photo { fields["photo"] = .string(photo) }
        return try await request("item.create", fields, as: ItemReply.self).item
    }

    /// Changes an item (`item.update`).
    public func updateItem(_ id: Int64, _ changes: ItemChanges) async throws -> Item {
        var fields = try JSONValue.fields(of: changes)
        fields["item"] = .int(id)
        return try await request("item.update", fields, as: ItemReply.self).item
    }

    /// Deletes an item (`item.delete`, owners).
    public func deleteItem(_ id: Int64) async throws {
        try await request("item.delete", ["item": .int(id)])
    }

    /// Pairs a tracker device with an item (`tracker.pair`); the reply's ``Tracker/key`` is shown only now. The
    /// tracker starts inactive: ``activateTracker(_:)``.
    public func pairTracker(item: Int64, device: String) async throws -> Tracker {
        try await request("tracker.pair", ["item": .int(item), "device": .string(device)], as: TrackerReply.self)
            .tracker
    }

    /// Lets a tracker's reports in (`tracker.activate`).
    @discardableResult
    public func activateTracker(_ id: Int64) async throws -> Tracker {
        try await request("tracker.activate", ["tracker": .int(id)], as: TrackerReply.self).tracker
    }

    /// Refuses a tracker's reports from now on (`tracker.deactivate`).
    @discardableResult
    public func deactivateTracker(_ id: Int64) async throws -> Tracker {
        try await request("tracker.deactivate", ["tracker": .int(id)], as: TrackerReply.self).tracker
    }

    /// Whether the tracker's device is shown the bucket's other items (`tracker.update`).
    @discardableResult
    public func updateTracker(_ id: Int64, showItems: Bool) async throws -> Tracker {
        let fields: [String: JSONValue] = ["tracker": .int(id), "show_items": .bool(showItems)]
        return try await request("tracker.update", fields, as: TrackerReply.self).tracker
    }

    /// Unpairs a tracker (`tracker.unpair`).
    public func unpairTracker(_ id: Int64) async throws {
        try await request("tracker.unpair", ["tracker": .int(id)])
    }

    /// The trackers of a bucket's items, without keys (`tracker.list`, owners).
    public func trackers(in bucket: Int64) async throws -> [Tracker] {
        try await request("tracker.list", ["bucket": .int(bucket)], as: TrackersReply.self).trackers
    }

    /// Watches the items you can view (`items.watch`): returns their latest positions, and from then on each newer
    /// fix arrives as ``CairnEvent/itemPosition(_:)``. Sent again after every reconnect (the fresh answer arrives as
    /// ``CairnEvent/itemPositions(_:)``).
    @discardableResult
    public func watchItems() async throws -> [ItemPosition] {
        try await watch("items.watch", as: ItemsWatchReply.self).positions
    }

    /// Stops watching items (`items.unwatch`).
    public func unwatchItems() async throws {
        try await unwatch("items.watch")
    }

    /// Where an item is, how far, and links to navigation apps (`item.locate`).
    public func locateItem(_ id: Int64) async throws -> ItemLocation {
        try await request("item.locate", ["item": .int(id)], as: ItemLocation.self)
    }

    /// Adds a safe zone of yours (`safe_zone.add`): radius 10 to 50,000 m.
    public func addSafeZone(name: String, latitude: Double, longitude: Double, radius: Double) async throws
        -> SafeZone
    {
        let fields: [String: JSONValue] = [
            "name": .string(name), "lat": .double(latitude), "lon": .double(longitude), "radius": .double(radius),
        ]
        return try await request("safe_zone.add", fields, as: ZoneReply.self).zone
    }

    /// Your safe zones, oldest first (`safe_zone.list`).
    public func safeZones() async throws -> [SafeZone] {
        try await request("safe_zone.list", as: ZonesReply.self).zones
    }

    /// Removes a safe zone (`safe_zone.remove`).
    public func removeSafeZone(_ id: Int64) async throws {
        try await request("safe_zone.remove", ["zone": .int(id)])
    }
}
