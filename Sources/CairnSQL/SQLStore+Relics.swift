// Relics, implementing the domain's `RelicStore`. A create checks, in the same transaction, that the media it names
// is an upload of the creator, so a relic can never point at someone else's file or at nothing. Expired relics stay
// until `purgeExpiredRelics` (their creator still lists them); the media they referenced is then unreferenced and
// the media collector removes it after its grace period.
public import CairnCore
public import CairnRelics

extension SQLStore {
    /// Markers of every relic not expired at `now`.
    public func loadLiveRelics(now: Int64) throws -> [RelicMarker] {
        try database.read { db in try SQLRelics.live(db, now: now) }
    }

    /// The live relics' markers, read while serving.
    public func liveRelics(now: Int64) async throws -> [RelicMarker] {
        try await database.read { db in try SQLRelics.live(db, now: now) }
    }

    /// Stores a relic; its media must be an upload of its creator.
    public func createRelic(_ relic: NewRelic) async throws -> Int64 {
        try await database.write { db in
            if let media = relic.mediaID {
                let owned: Bool =
                    try db.scalar(
                        "SELECT EXISTS(SELECT 1 FROM media WHERE id = ? AND owner_id = ?)", [media, relic.creatorID])
                    ?? false
                guard owned else { throw RelicStoreError.mediaNotFound }
            }
            return try db.scalar(
                """
                INSERT INTO relics (creator_id, lat, lon, radius, text, media_id, password_hash, created_at,
                  expires_at, creator_hidden)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
                """,
                [
                    relic.creatorID, relic.lat, relic.lon, relic.radius, relic.text, relic.mediaID,
                    relic.passwordHash, relic.createdAt, relic.expiresAt, relic.creatorHidden,
                ], as: Int64.self)!
        }
    }

    /// One relic, expired or not.
    public func relic(id: Int64) async throws -> RelicRecord? {
        try await database.read { db in
            try db.row("SELECT \(SQLRelics.columns) FROM relics WHERE id = ?", [id]).map(SQLRelics.relic)
        }
    }

    /// The creator's relics, newest first.
    public func relics(creator: Int64, before: Int64?, limit: Int) async throws -> [RelicRecord] {
        try await database.read { db in
            try db.rows(
                "SELECT \(SQLRelics.columns) FROM relics WHERE creator_id = ? AND id < ? ORDER BY id DESC LIMIT ?",
                [creator, before ?? Int64.max, limit]
            ).map(SQLRelics.relic)
        }
    }

    /// Deletes a relic.
    public func deleteRelic(id: Int64) async throws -> Bool {
        try await database.write { db in try db.execute("DELETE FROM relics WHERE id = ?", [id]) > 0 }
    }

    /// Deletes relics that expired before `cutoff`.
    public func purgeExpiredRelics(expiredBefore cutoff: Int64) async throws -> Int {
        try await database.write { db in
            try db.execute("DELETE FROM relics WHERE expires_at IS NOT NULL AND expires_at < ?", [cutoff])
        }
    }
}

enum SQLRelics {
    static let columns =
        "id, creator_id, lat, lon, radius, created_at, expires_at, password_hash, text, media_id, creator_hidden"

    static func live(_ db: any SQLDatabase, now: Int64) throws -> [RelicMarker] {
        try db.rows("SELECT \(columns) FROM relics WHERE expires_at IS NULL OR expires_at > ?", [now]).map {
            relic($0).marker
        }
    }

    static func relic(_ row: SQLRow) -> RelicRecord {
        let hash: String? = row[7]
        let marker = RelicMarker(
            id: row[0], creatorID: row[1], lat: row[2], lon: row[3], radius: row[4],
            createdAt: row[5], expiresAt: row[6], locked: hash != nil, creatorHidden: row[10])
        return RelicRecord(marker: marker, text: row[8], mediaID: row[9], passwordHash: hash)
    }
}
