// Bulk loading of generated pictures (`FixturePicture`) into the shared store, as the SQLite store's fixtures do for
// the pictures benchmark: bypassing the request path, a whole batch in one statement (`INSERT ... SELECT FROM
// unnest(...)`, one round trip). Not used by the hub.
public import CairnPictures

extension PostgresStore {
    /// Inserts a private event owned by `owner` (password hash "x": nobody can join it); returns its id.
    public func insertFixtureEvent(tag: String, owner: Int64) async throws -> Int64 {
        try await pool.write { db in
            let id = try db.scalar(
                "INSERT INTO events (tag, owner_id, password_hash, created_at) VALUES (?, ?, 'x', 0) RETURNING id",
                [tag, owner], as: Int64.self)!
            try db.execute("INSERT INTO event_members (event_id, user_id, joined_at) VALUES (?, ?, 0)", [id, owner])
            return id
        }
    }

    /// Inserts `pictures` in one statement, ids in the given order (media id: 64 zeros).
    public func insertFixturePictures(_ pictures: [FixturePicture]) async throws {
        guard !pictures.isEmpty else { return }
        let arguments: PostgresArguments = [
            String(repeating: "0", count: 64), PostgresIntArray(pictures.map(\.by)),
            PostgresArray(pictures.map(\.privateEvent)), PostgresArray(pictures.map { Optional($0.lat) }),
            PostgresArray(pictures.map { Optional($0.lon) }),
            PostgresIntArray(pictures.map { PictureArea.strip(lon: $0.lon) }), PostgresIntArray(pictures.map(\.likes)),
            PostgresIntArray(pictures.map(\.createdAt)),
        ]
        try await pool.write { db in
            try db.execute(
                """
                INSERT INTO pictures (by_id, media_id, event_id, private_event, lat, lon, strip, likes, created_at)
                SELECT f.by_id, ?::text, f.event_id, f.event_id, f.lat, f.lon, f.strip, f.likes, f.created_at
                FROM unnest(?::bigint[], ?::bigint[], ?::float8[], ?::float8[], ?::bigint[], ?::bigint[], ?::bigint[])
                  WITH ORDINALITY AS f(by_id, event_id, lat, lon, strip, likes, created_at, n)
                ORDER BY f.n
                """, arguments)
        }
    }

    /// Marks `ids` hidden (as reports past the threshold would).
    public func hideFixturePictures(_ ids: [Int64]) async throws {
        try await pool.write { db in
            try db.execute("UPDATE pictures SET hidden = 1 WHERE id = ANY(?::bigint[])", [PostgresIntArray(ids)])
        }
    }
}
