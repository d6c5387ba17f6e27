// Buckets and items, implementing the domain's `BucketStore`. An item's photo is checked, in the same transaction as
// the write, to be an upload of the account setting it; the limits are counted in the transaction that inserts
// (SQLite's single writer, PostgreSQL's SERIALIZABLE: the limit holds across nodes too). Removing a bucket's last owner
// removes the bucket (the schema's trigger), so an account deleted by the guest purge takes its sole-owned buckets.
// A list of buckets is read in two statements (buckets, then all their members), not one round trip per bucket.
public import CairnBuckets

extension SQLStore {
    private static var itemColumns: String {
        "id, bucket_id, name, note, done, photo_id, photo_owner, created_at, hidden, alert, "
            + "(SELECT t.id FROM trackers t WHERE t.item_id = items.id) AS tracker_id"
    }

    public func createBucket(
        name: String, privacy: BucketPrivacy, owner: Int64, at: Int64, limit: Int
    ) async throws -> BucketRecord {
        try await database.write { db in
            let owned: Int =
                try db.scalar(
                    "SELECT COUNT(*) FROM bucket_members WHERE user_id = ? AND role = 'owner'", [owner]) ?? 0
            guard owned < limit else { throw BucketStoreError.tooManyBuckets(limit: limit) }
            let id: Int64 = try db.scalar(
                "INSERT INTO buckets (name, privacy, created_at) VALUES (?, ?, ?) RETURNING id",
                [name, privacy.rawValue, at])!
            try db.execute(
                "INSERT INTO bucket_members (bucket_id, user_id, role) VALUES (?, ?, 'owner')", [id, owner])
            return BucketRecord(id: id, name: name, privacy: privacy, created: at, members: [owner: .owner])
        }
    }

    public func bucket(id: Int64) async throws -> BucketRecord? {
        try await database.read { db in try Self.bucket(db, id) }
    }

    public func buckets(member user: Int64, friends: [Int64]) async throws -> [BucketRecord] {
        try await database.read { db in
            let ids = try db.scalars(
                """
                SELECT bucket_id FROM bucket_members WHERE user_id = ?
                UNION
                SELECT m.bucket_id FROM bucket_members m JOIN buckets b ON b.id = m.bucket_id
                WHERE m.role = 'owner' AND b.privacy = 'friends' AND \(db.dialect.isAny("m.user_id"))
                """, [user, SQLIntegers(friends)], as: Int64.self)
            return try Self.buckets(db, ids)
        }
    }

    public func buckets(ownedBy user: Int64) async throws -> [BucketRecord] {
        try await database.read { db in
            let ids = try db.scalars(
                "SELECT bucket_id FROM bucket_members WHERE user_id = ? AND role = 'owner'", [user], as: Int64.self)
            return try Self.buckets(db, ids)
        }
    }

    public func updateBucket(id: Int64, name: String?, privacy: BucketPrivacy?) async throws -> BucketRecord? {
        try await database.write { db in
            if name != nil || privacy != nil {
                try db.execute(
                    "UPDATE buckets SET name = coalesce(?, name), privacy = coalesce(?, privacy) WHERE id = ?",
                    [name, privacy?.rawValue, id])
            }
            return try Self.bucket(db, id)
        }
    }

    public func deleteBucket(id: Int64) async throws {
        try await database.write { db in try db.execute("DELETE FROM buckets WHERE id = ?", [id]) }
    }

    public func setMember(bucket: Int64, user: Int64, role: BucketRole) async throws -> BucketRecord? {
        try await database.write { db in
            guard try db.scalar("SELECT 1 FROM buckets WHERE id = ?", [bucket], as: Int.self) != nil else {
                return nil
            }
            try db.execute(
                """
                INSERT INTO bucket_members (bucket_id, user_id, role) VALUES (?, ?, ?)
                ON CONFLICT (bucket_id, user_id) DO UPDATE SET role = excluded.role
                """, [bucket, user, role.rawValue])
            return try Self.bucket(db, bucket)
        }
    }

    public func removeMember(bucket: Int64, user: Int64) async throws -> BucketRecord? {
        try await database.write { db in
            try db.execute("DELETE FROM bucket_members WHERE bucket_id = ? AND user_id = ?", [bucket, user])
            return try Self.bucket(db, bucket)
        }
    }

    public func removeViewer(_ viewer: Int64, fromBucketsOwnedBy owner: Int64) async throws -> [Int64] {
        try await database.write { db in
            try db.scalars(
                """
                DELETE FROM bucket_members WHERE user_id = ? AND role = 'viewer'
                  AND bucket_id IN (SELECT bucket_id FROM bucket_members WHERE user_id = ? AND role = 'owner')
                RETURNING bucket_id
                """, [viewer, owner], as: Int64.self
            ).sorted()
        }
    }

    public func items(bucket: Int64) async throws -> [ItemRecord] {
        try await database.read { db in
            try db.rows("SELECT \(Self.itemColumns) FROM items WHERE bucket_id = ? ORDER BY id", [bucket])
                .map(Self.item)
        }
    }

    public func item(id: Int64) async throws -> ItemRecord? {
        try await database.read { db in
            try db.row("SELECT \(Self.itemColumns) FROM items WHERE id = ?", [id]).map(Self.item)
        }
    }

    public func createItem(
        bucket: Int64, name: String, note: String?, photo: MediaRef?, at: Int64, limit: Int
    ) async throws -> ItemRecord {
        try await database.write { db in
            let held: Int = try db.scalar("SELECT COUNT(*) FROM items WHERE bucket_id = ?", [bucket]) ?? 0
            guard held < limit else { throw BucketStoreError.tooManyItems(limit: limit) }
            if let photo { try Self.requireMedia(db, photo) }
            let id: Int64 = try db.scalar(
                """
                INSERT INTO items (bucket_id, name, note, done, photo_id, photo_owner, created_at)
                VALUES (?, ?, ?, false, ?, ?, ?) RETURNING id
                """, [bucket, name, note, photo?.id, photo?.owner, at])!
            return ItemRecord(
                id: id, bucket: bucket, name: name, note: note, done: false, photo: photo, created: at)
        }
    }

    public func updateItem(id: Int64, changes: ItemChanges, by user: Int64) async throws -> ItemRecord? {
        try await database.write { db in
            // One UPDATE with the columns asked for, after the photo (if any) is checked.
            var assignments: [String] = []
            var arguments: SQLArguments = []
            if let name = changes.name {
                assignments.append("name = ?")
                arguments.append(name)
            }
            if let note = changes.note {
                assignments.append("note = ?")
                arguments.append(note.isEmpty ? nil : note)
            }
            if let photo = changes.photo {
                if photo.isEmpty {
                    assignments.append("photo_id = NULL, photo_owner = NULL")
                } else {
                    try Self.requireMedia(db, MediaRef(id: photo, owner: user))
                    assignments.append("photo_id = ?, photo_owner = ?")
                    arguments += [photo, user]
                }
            }
            for (column, value) in [("done", changes.done), ("hidden", changes.hidden), ("alert", changes.alert)] {
                if let value {
                    assignments.append("\(column) = ?")
                    arguments.append(value)
                }
            }
            if !assignments.isEmpty {
                arguments.append(id)
                try db.execute("UPDATE items SET \(assignments.joined(separator: ", ")) WHERE id = ?", arguments)
            }
            return try db.row("SELECT \(Self.itemColumns) FROM items WHERE id = ?", [id]).map(Self.item)
        }
    }

    public func deleteItem(id: Int64) async throws {
        try await database.write { db in try db.execute("DELETE FROM items WHERE id = ?", [id]) }
    }

    private static func requireMedia(_ db: any SQLDatabase, _ photo: MediaRef) throws {
        let owned =
            try db.scalar(
                "SELECT EXISTS(SELECT 1 FROM media WHERE id = ? AND owner_id = ?)", [photo.id, photo.owner],
                as: Bool.self) ?? false
        guard owned else { throw BucketStoreError.mediaNotFound }
    }

    private static func bucket(_ db: any SQLDatabase, _ id: Int64) throws -> BucketRecord? {
        try buckets(db, [id]).first
    }

    /// The buckets of `ids` that exist, in id order, with their members: two statements however many.
    private static func buckets(_ db: any SQLDatabase, _ ids: [Int64]) throws -> [BucketRecord] {
        guard !ids.isEmpty else { return [] }
        let list = SQLIntegers(ids)
        var members: [Int64: [Int64: BucketRole]] = [:]
        for m in try db.rows(
            "SELECT bucket_id, user_id, role FROM bucket_members WHERE \(db.dialect.isAny("bucket_id"))", [list])
        {
            members[m["bucket_id"], default: [:]][m["user_id"]] = BucketRole(rawValue: m["role"] as String) ?? .viewer
        }
        return try db.rows(
            "SELECT id, name, privacy, created_at FROM buckets WHERE \(db.dialect.isAny("id")) ORDER BY id", [list]
        ).map { row in
            let id: Int64 = row["id"]
            return BucketRecord(
                id: id, name: row["name"],
                privacy: BucketPrivacy(rawValue: row["privacy"] as String) ?? .private, created: row["created_at"],
                members: members[id] ?? [:])
        }
    }

    private static func item(_ row: SQLRow) -> ItemRecord {
        let photoID: String? = row["photo_id"]
        let photoOwner: Int64? = row["photo_owner"]
        return ItemRecord(
            id: row["id"], bucket: row["bucket_id"], name: row["name"], note: row["note"], done: row["done"],
            photo: photoID.flatMap { id in photoOwner.map { MediaRef(id: id, owner: $0) } }, created: row["created_at"],
            tracker: row["tracker_id"], hidden: row["hidden"], alert: row["alert"])
    }

    /// The items with `alert` on and their buckets' owners, for restoring the hub at start.
    public func loadItemAlerts() throws -> [ItemAlertRecord] { try database.read(Self.itemAlerts) }

    /// The items with `alert` on and their buckets' owners, read again by a node catching up.
    public func itemAlerts() async throws -> [ItemAlertRecord] { try await database.read(Self.itemAlerts) }

    private static func itemAlerts(_ db: any SQLDatabase) throws -> [ItemAlertRecord] {
        var found: [Int64: ItemAlertRecord] = [:]
        for row in try db.rows(
            """
            SELECT i.id, i.bucket_id, m.user_id FROM items i
            JOIN bucket_members m ON m.bucket_id = i.bucket_id AND m.role = 'owner'
            WHERE i.alert
            """)
        {
            let item: Int64 = row["id"]
            let bucket: Int64 = row["bucket_id"]
            found[item, default: ItemAlertRecord(item: item, bucket: bucket, owners: [])].owners.insert(row["user_id"])
        }
        return found.values.sorted { $0.item < $1.item }
    }
}
