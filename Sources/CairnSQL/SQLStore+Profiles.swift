// Profiles, implementing the domain's `ProfileStore`: the bio and the photo live on the user's row. A change is one
// transaction that first checks the new photo is an upload of the user, so a profile never points at someone else's
// file or at nothing; the media collector spares media used as a photo.
public import CairnProfiles

extension SQLStore {
    /// A user's profile.
    public func profile(id: Int64) async throws -> Profile? {
        try await database.read { db in try SQLProfiles.profile(db, id: id) }
    }

    /// Applies a change in one transaction; the photo must be an upload of the user.
    public func updateProfile(userID: Int64, _ change: ProfileChange) async throws -> Profile? {
        try await database.write { db in
            guard try SQLProfiles.profile(db, id: userID) != nil else { return nil }
            if let photo = change.photo, let media = photo {
                let owned: Bool =
                    try db.scalar(
                        "SELECT EXISTS(SELECT 1 FROM media WHERE id = ? AND owner_id = ?)", [media, userID]) ?? false
                guard owned else { throw ProfileStoreError.mediaNotFound }
            }
            if let name = change.name {
                try db.execute(
                    "UPDATE users SET name = ?, name_folded = ? WHERE id = ?", [name, SQLText.fold(name), userID])
            }
            if let bio = change.bio {
                try db.execute("UPDATE users SET bio = ? WHERE id = ?", [bio, userID])
            }
            if let photo = change.photo {
                try db.execute("UPDATE users SET photo_media_id = ? WHERE id = ?", [photo, userID])
            }
            return try SQLProfiles.profile(db, id: userID)
        }
    }
}

enum SQLProfiles {
    static func profile(_ db: any SQLDatabase, id: Int64) throws -> Profile? {
        try db.row("SELECT id, username, name, is_guest, bio, photo_media_id FROM users WHERE id = ?", [id]).map {
            Profile(user: SQLAccounts.user($0), bio: $0["bio"], photo: $0["photo_media_id"])
        }
    }
}
