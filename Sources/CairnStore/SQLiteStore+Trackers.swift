// Trackers in SQLite, implementing the domain's `TrackerStore`. The unique device id and the one tracker per item are
// the table's unique constraints (migration v11), so racing pairings settle in the database; a tracker goes with its
// item (the foreign key cascades). Only the digest of a key is stored.
import CairnDomain
import Foundation
import GRDB

extension SQLiteStore: TrackerStore {
    private static let trackerColumns = "id, device, item_id, active, created_at, key_hash"

    public func pairTracker(item: Int64, device: String, keyDigest: [UInt8], at: Int64) async throws -> TrackerRecord {
        do {
            return try await pool.write { db in
                guard
                    try Bool.fetchOne(db, sql: "SELECT EXISTS(SELECT 1 FROM items WHERE id = ?)", arguments: [item])
                        ?? false
                else { throw TrackerStoreError.itemNotFound }
                if try Bool.fetchOne(
                    db, sql: "SELECT EXISTS(SELECT 1 FROM trackers WHERE item_id = ?)", arguments: [item]) ?? false
                {
                    throw TrackerStoreError.itemTaken
                }
                try db.execute(
                    sql: "INSERT INTO trackers (device, item_id, key_hash, active, created_at) VALUES (?, ?, ?, 0, ?)",
                    arguments: [device, item, Data(keyDigest), at])
                return TrackerRecord(id: db.lastInsertedRowID, device: device, item: item, active: false, created: at)
            }
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            throw TrackerStoreError.deviceTaken
        }
    }

    public func tracker(id: Int64) async throws -> TrackerRecord? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.trackerColumns) FROM trackers WHERE id = ?", arguments: [id])
                .map(Self.tracker)
        }
    }

    public func tracker(device: String) async throws -> (record: TrackerRecord, keyDigest: [UInt8])? {
        try await pool.read { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT \(Self.trackerColumns) FROM trackers WHERE device = ?", arguments: [device])
            else { return nil }
            let digest: Data = row["key_hash"]
            return (Self.tracker(row), [UInt8](digest))
        }
    }

    public func setTrackerActive(id: Int64, active: Bool) async throws -> TrackerRecord? {
        try await pool.write { db in
            try db.execute(sql: "UPDATE trackers SET active = ? WHERE id = ?", arguments: [active, id])
            return try Row.fetchOne(
                db, sql: "SELECT \(Self.trackerColumns) FROM trackers WHERE id = ?", arguments: [id]
            ).map(Self.tracker)
        }
    }

    public func unpairTracker(id: Int64) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM trackers WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    private static func tracker(_ row: Row) -> TrackerRecord {
        TrackerRecord(
            id: row["id"], device: row["device"], item: row["item_id"], active: row["active"],
            created: row["created_at"])
    }
}
