// Buckets and items in SQLite, implementing the domain's `BucketStore`. An item's photo is checked, in the same
// transaction as the write, to be an upload of the account setting it. Removing a bucket's last owner removes the
// bucket (a trigger of migration v10), so an account deleted by the guest purge takes its sole-owned buckets along.
import CairnBuckets
import GRDB

extension SQLiteStore: BucketStore {
    private static let itemColumns =
        "id, bucket_id, name, note, done, photo_id, photo_owner, created_at, hidden, alert, "
        + "(SELECT t.id FROM trackers t WHERE t.item_id = items.id) AS tracker_id"

    public func createBucket(
        name: String, privacy: BucketPrivacy, owner: Int64, at: Int64, limit: Int
    ) async throws -> BucketRecord {
        try await pool.write { db in
            let owned =
                try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM bucket_members WHERE user_id = ? AND role = 'owner'",
                    arguments: [owner]) ?? 0
            guard owned < limit else { throw BucketStoreError.tooManyBuckets(limit: limit) }
            try db.execute(
                sql: "INSERT INTO buckets (name, privacy, created_at) VALUES (?, ?, ?)",
                arguments: [name, privacy.rawValue, at])
            let id = db.lastInsertedRowID
            try db.execute(
                sql: "INSERT INTO bucket_members (bucket_id, user_id, role) VALUES (?, ?, 'owner')",
                arguments: [id, owner])
            return BucketRecord(id: id, name: name, privacy: privacy, created: at, members: [owner: .owner])
        }
    }

    public func bucket(id: Int64) async throws -> BucketRecord? {
        try await pool.read { db in try Self.bucket(db, id) }
    }

    public func buckets(member user: Int64, friends: [Int64]) async throws -> [BucketRecord] {
        try await pool.read { db in
            var ids = Set(
                try Int64.fetchAll(
                    db, sql: "SELECT bucket_id FROM bucket_members WHERE user_id = ?", arguments: [user]))
            for chunk in stride(from: 0, to: friends.count, by: 500) {
                let part = Array(friends[chunk..<min(chunk + 500, friends.count)])
                let list = Array(repeating: "?", count: part.count).joined(separator: ",")
                ids.formUnion(
                    try Int64.fetchAll(
                        db,
                        sql: """
                            SELECT m.bucket_id FROM bucket_members m JOIN buckets b ON b.id = m.bucket_id
                            WHERE m.role = 'owner' AND b.privacy = 'friends' AND m.user_id IN (\(list))
                            """, arguments: StatementArguments(part)))
            }
            return try ids.sorted().compactMap { try Self.bucket(db, $0) }
        }
    }

    public func buckets(ownedBy user: Int64) async throws -> [BucketRecord] {
        try await pool.read { db in
            try Int64.fetchAll(
                db, sql: "SELECT bucket_id FROM bucket_members WHERE user_id = ? AND role = 'owner' ORDER BY bucket_id",
                arguments: [user]
            ).compactMap { try Self.bucket(db, $0) }
        }
    }

    public func updateBucket(id: Int64, name: String?, privacy: BucketPrivacy?) async throws -> BucketRecord? {
        try await pool.write { db in
            if let name { try db.execute(sql: "UPDATE buckets SET name = ? WHERE id = ?", arguments: [name, id]) }
            if let privacy {
                try db.execute(sql: "UPDATE buckets SET privacy = ? WHERE id = ?", arguments: [privacy.rawValue, id])
            }
            return try Self.bucket(db, id)
        }
    }

    public func deleteBucket(id: Int64) async throws {
        try await pool.write { db in try db.execute(sql: "DELETE FROM buckets WHERE id = ?", arguments: [id]) }
    }

    public func setMember(bucket: Int64, user: Int64, role: BucketRole) async throws -> BucketRecord? {
        try await pool.write { db in
            guard try Self.bucket(db, bucket) != nil else { return nil }
            try db.execute(
                sql: """
                    INSERT INTO bucket_members (bucket_id, user_id, role) VALUES (?, ?, ?)
                    ON CONFLICT (bucket_id, user_id) DO UPDATE SET role = excluded.role
                    """, arguments: [bucket, user, role.rawValue])
            return try Self.bucket(db, bucket)
        }
    }

    public func removeMember(bucket: Int64, user: Int64) async throws -> BucketRecord? {
        try await pool.write { db in
            try db.execute(
                sql: "DELETE FROM bucket_members WHERE bucket_id = ? AND user_id = ?", arguments: [bucket, user])
            return try Self.bucket(db, bucket)
        }
    }

    public func removeViewer(_ viewer: Int64, fromBucketsOwnedBy owner: Int64) async throws -> [Int64] {
        try await pool.write { db in
            let ids = try Int64.fetchAll(
                db,
                sql: """
                    SELECT v.bucket_id FROM bucket_members v JOIN bucket_members o ON o.bucket_id = v.bucket_id
                    WHERE v.user_id = ? AND v.role = 'viewer' AND o.user_id = ? AND o.role = 'owner'
                    """, arguments: [viewer, owner])
            for id in ids {
                try db.execute(
                    sql: "DELETE FROM bucket_members WHERE bucket_id = ? AND user_id = ?", arguments: [id, viewer])
            }
            return ids
        }
    }

    public func items(bucket: Int64) async throws -> [ItemRecord] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT \(Self.itemColumns) FROM items WHERE bucket_id = ? ORDER BY id", arguments: [bucket]
            ).map(Self.item)
        }
    }

    public func item(id: Int64) async throws -> ItemRecord? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.itemColumns) FROM items WHERE id = ?", arguments: [id]).map(
                Self.item)
        }
    }

    public func createItem(
        bucket: Int64, name: String, note: String?, photo: MediaRef?, at: Int64, limit: Int
    ) async throws -> ItemRecord {
        try await pool.write { db in
            let held = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM items WHERE bucket_id = ?", arguments: [bucket])
            guard (held ?? 0) < limit else { throw BucketStoreError.tooManyItems(limit: limit) }
            if let photo { try Self.requireMedia(db, photo) }
            try db.execute(
                sql: """
                    INSERT INTO items (bucket_id, name, note, done, photo_id, photo_owner, created_at)
                    VALUES (?, ?, ?, 0, ?, ?, ?)
                    """, arguments: [bucket, name, note, photo?.id, photo?.owner, at])
            return ItemRecord(
                id: db.lastInsertedRowID, bucket: bucket, name: name, note: note, done: false, photo: photo,
                created: at)
        }
    }

    public func updateItem(id: Int64, changes: ItemChanges, by user: Int64) async throws -> ItemRecord? {
        try await pool.write { db in
            if let name = changes.name {
                try db.execute(sql: "UPDATE items SET name = ? WHERE id = ?", arguments: [name, id])
            }
            if let note = changes.note {
                try db.execute(
                    sql: "UPDATE items SET note = ? WHERE id = ?", arguments: [note.isEmpty ? nil : note, id])
            }
            if let photo = changes.photo {
                if photo.isEmpty {
                    try db.execute(
                        sql: "UPDATE items SET photo_id = NULL, photo_owner = NULL WHERE id = ?", arguments: [id])
                } else {
                    try Self.requireMedia(db, MediaRef(id: photo, owner: user))
                    try db.execute(
                        sql: "UPDATE items SET photo_id = ?, photo_owner = ? WHERE id = ?",
                        arguments: [photo, user, id])
                }
            }
            if let done = changes.done {
                try db.execute(sql: "UPDATE items SET done = ? WHERE id = ?", arguments: [done, id])
            }
            if let hidden = changes.hidden {
                try db.execute(sql: "UPDATE items SET hidden = ? WHERE id = ?", arguments: [hidden, id])
            }
            if let alert = changes.alert {
                try db.execute(sql: "UPDATE items SET alert = ? WHERE id = ?", arguments: [alert, id])
            }
            return try Row.fetchOne(db, sql: "SELECT \(Self.itemColumns) FROM items WHERE id = ?", arguments: [id])
                .map(Self.item)
        }
    }

    public func deleteItem(id: Int64) async throws {
        try await pool.write { db in try db.execute(sql: "DELETE FROM items WHERE id = ?", arguments: [id]) }
    }

    private static func requireMedia(_ db: Database, _ photo: MediaRef) throws {
        let owned =
            try Bool.fetchOne(
                db, sql: "SELECT EXISTS(SELECT 1 FROM media WHERE id = ? AND owner_id = ?)",
                arguments: [photo.id, photo.owner]) ?? false
        guard owned else { throw BucketStoreError.mediaNotFound }
    }

    private static func bucket(_ db: Database, _ id: Int64) throws -> BucketRecord? {
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT id, name, privacy, created_at FROM buckets WHERE id = ?", arguments: [id])
        else { return nil }
        var members: [Int64: BucketRole] = [:]
        for m in try Row.fetchAll(
            db, sql: "SELECT user_id, role FROM bucket_members WHERE bucket_id = ?", arguments: [id])
        {
            members[m["user_id"]] = BucketRole(rawValue: m["role"] as String) ?? .viewer
        }
        return BucketRecord(
            id: row["id"], name: row["name"], privacy: BucketPrivacy(rawValue: row["privacy"] as String) ?? .private,
            created: row["created_at"], members: members)
    }

    private static func item(_ row: Row) -> ItemRecord {
        let photoID: String? = row["photo_id"]
        let photoOwner: Int64? = row["photo_owner"]
        return ItemRecord(
            id: row["id"], bucket: row["bucket_id"], name: row["name"], note: row["note"], done: row["done"],
            photo: photoID.flatMap { id in photoOwner.map { MediaRef(id: id, owner: $0) } }, created: row["created_at"],
            tracker: row["tracker_id"], hidden: row["hidden"], alert: row["alert"])
    }

    /// The items with `alert` on and their buckets' owners, for restoring the hub at start.
    public func loadItemAlerts() throws -> [ItemAlertRecord] { try pool.read(Self.itemAlerts) }

    /// The items with `alert` on and their buckets' owners, read again by a node catching up.
    public func itemAlerts() async throws -> [ItemAlertRecord] { try await pool.read(Self.itemAlerts) }

    private static func itemAlerts(_ db: Database) throws -> [ItemAlertRecord] {
        var found: [Int64: ItemAlertRecord] = [:]
        for row in try Row.fetchAll(
            db,
            sql: """
                SELECT i.id, i.bucket_id, m.user_id FROM items i
                JOIN bucket_members m ON m.bucket_id = i.bucket_id AND m.role = 'owner'
                WHERE i.alert = 1
                """)
        {
            let item: Int64 = row["id"]
            let bucket: Int64 = row["bucket_id"]
            found[item, default: ItemAlertRecord(item: item, bucket: bucket, owners: [])].owners.insert(row["user_id"])
        }
        return found.values.sorted { $0.item < $1.item }
    }
}
