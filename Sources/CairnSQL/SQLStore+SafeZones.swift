// Safe zones, implementing the domain's `SafeZoneStore`: each user's circles where no left-behind alert is raised.
// The per-user count is checked in the same transaction as the insert (SERIALIZABLE on PostgreSQL, so two nodes
// adding at once cannot both pass the limit); zones go with their account.
public import CairnTrackers

extension SQLStore {
    public func addSafeZone(
        owner: Int64, name: String, lat: Double, lon: Double, radius: Double, limit: Int
    ) async throws -> SafeZone {
        try await database.write { db in
            let held: Int = try db.scalar("SELECT COUNT(*) FROM safe_zones WHERE user_id = ?", [owner]) ?? 0
            guard held < limit else { throw SafeZoneStoreError.tooMany(limit: limit) }
            let id: Int64 = try db.scalar(
                "INSERT INTO safe_zones (user_id, name, lat, lon, radius) VALUES (?, ?, ?, ?, ?) RETURNING id",
                [owner, name, lat, lon, radius])!
            return SafeZone(id: id, owner: owner, name: name, lat: lat, lon: lon, radius: radius)
        }
    }

    public func removeSafeZone(id: Int64, owner: Int64) async throws -> Bool {
        try await database.write { db in
            try db.execute("DELETE FROM safe_zones WHERE id = ? AND user_id = ?", [id, owner]) > 0
        }
    }

    /// Every user's safe zones, for restoring the hub at start.
    public func loadSafeZones() throws -> [SafeZone] {
        try database.read { db in
            try db.rows("SELECT id, user_id, name, lat, lon, radius FROM safe_zones ORDER BY id").map { row in
                SafeZone(
                    id: row["id"], owner: row["user_id"], name: row["name"], lat: row["lat"], lon: row["lon"],
                    radius: row["radius"])
            }
        }
    }
}
