// Profiles in SQLite, implementing the domain's `ProfileStore`: the bio and the photo live on the user's row
// (migration v9). A change is one transaction that first checks the new photo is an upload of the user, so a
// profile never points at someone else's file or at nothing; the media collector spares media used as a photo.
import CairnProfiles
import GRDB

extension SQLiteStore: ProfileStore {
    private static let profileColumns = "id, username, name, is_guest, bio, photo_media_id"

    /// A user's profile.
    public func profile(id: Int64) async throws -> Profile? {
        try await pool.read { db in try Self.profile(db, id: id) }
    }

    /// Applies a change in one transaction; the photo must be an upload of the user.
    public func updateProfile(userID: Int64, _ change: ProfileChange) async throws -> Profile? {
        try await pool.write { db in
            guard try Self.profile(db, id: userID) != nil else { return nil }
            if let photo = change.photo, let media = photo {
                let owned =
                    try Bool.fetchOne(
                        db, sql: "SELECT EXISTS(SELECT 1 FROM media WHERE id = ? AND owner_id = ?)",
                        arguments: [media, userID]) ?? false
                guard owned else { throw ProfileStoreError.mediaNotFound }
            }
            if let name = change.name {
                try db.execute(sql: "UPDATE users SET name = ? WHERE id = ?", arguments: [name, userID])
            }
            if let bio = change.bio {
                try db.execute(sql: "UPDATE users SET bio = ? WHERE id = ?", arguments: [bio, userID])
            }
            if let photo = change.photo {
                try db.execute(sql: "UPDATE users SET photo_media_id = ? WHERE id = ?", arguments: [photo, userID])
            }
            return try Self.profile(db, id: userID)
        }
    }

    private static func profile(_ db: Database, id: Int64) throws -> Profile? {
        try Row.fetchOne(db, sql: "SELECT \(profileColumns) FROM users WHERE id = ?", arguments: [id]).map { row in
            Profile(user: user(row), bio: row["bio"], photo: row["photo_media_id"])
        }
    }
}
