// Safe zones in SQLite, implementing the domain's `SafeZoneStore`: each user's circles where no left-behind alert is
// raised. The per-user count is checked in the same transaction as the insert; zones go with their account.
import CairnTrackers
import GRDB

extension SQLiteStore: SafeZoneStore {
    public func addSafeZone(
        owner: Int64, name: String, lat: Double, lon: Double, radius: Double, limit: Int
    ) async throws -> SafeZone {
        try await pool.write { db in
            let held =
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM safe_zones WHERE user_id = ?", arguments: [owner]) ?? 0
            guard held < limit else { throw SafeZoneStoreError.tooMany(limit: limit) }
            try db.execute(
                sql: "INSERT INTO safe_zones (user_id, name, lat, lon, radius) VALUES (?, ?, ?, ?, ?)",
                arguments: [owner, name, lat, lon, radius])
            return SafeZone(id: db.lastInsertedRowID, owner: owner, name: name, lat: lat, lon: lon, radius: radius)
        }
    }

    public func removeSafeZone(id: Int64, owner: Int64) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM safe_zones WHERE id = ? AND user_id = ?", arguments: [id, owner])
            return db.changesCount > 0
        }
    }

    /// Every user's safe zones, for restoring the hub at start.
    public func loadSafeZones() throws -> [SafeZone] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, user_id, name, lat, lon, radius FROM safe_zones ORDER BY id").map {
                row in
                SafeZone(
                    id: row["id"], owner: row["user_id"], name: row["name"], lat: row["lat"], lon: row["lon"],
                    radius: row["radius"])
            }
        }
    }
}
