// Bulk loading of generated pictures for the pictures benchmark (`cairn-bench pictures`), in transactions of many
// rows, bypassing the request path (a million posts through the hub would measure the posting, not the pages).
// Not used by the hub. The rows are `FixturePicture`s (CairnPictures, shared with the PostgreSQL store).
public import CairnPictures
import GRDB

extension SQLiteStore {
    /// Inserts a private event owned by `owner` (password hash "x": nobody can join it); returns its id.
    public func insertFixtureEvent(tag: String, owner: Int64) async throws -> Int64 {
        try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO events (tag, owner_id, password_hash, created_at) VALUES (?, ?, 'x', 0)",
                arguments: [tag, owner])
            let id = db.lastInsertedRowID
            try db.execute(
                sql: "INSERT INTO event_members (event_id, user_id, joined_at) VALUES (?, ?, 0)",
                arguments: [id, owner])
            return id
        }
    }

    /// Inserts `pictures` in one transaction (media id: 64 zeros).
    public func insertFixturePictures(_ pictures: [FixturePicture]) async throws {
        try await pool.write { db in
            let insert = try db.cachedStatement(
                sql: """
                    INSERT INTO pictures (by_id, media_id, event_id, private_event, lat, lon, strip, likes, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            let media = String(repeating: "0", count: 64)
            for p in pictures {
                try insert.execute(arguments: [
                    p.by, media, p.privateEvent, p.privateEvent, p.lat, p.lon, PictureArea.strip(lon: p.lon),
                    p.likes, p.createdAt,
                ])
            }
        }
    }

    /// Marks `ids` hidden (as reports past the threshold would).
    public func hideFixturePictures(_ ids: [Int64]) async throws {
        try await pool.write { db in
            for id in ids { try db.execute(sql: "UPDATE pictures SET hidden = 1 WHERE id = ?", arguments: [id]) }
        }
    }
}
