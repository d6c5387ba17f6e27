// What profiles need from durable storage: a user's bio and photo beside the account's name. A change is committed
// before `profile.set` replies; the photo must be an upload of the user, checked in the same transaction, so a
// profile can never point at someone else's file or at nothing (and the media collector spares it while it is used).
public import CairnCore

/// A user with what they tell others about themselves.
public struct Profile: Sendable, Equatable {
    /// The account (its `name` is the display name).
    public var user: User
    /// A short text about the user; nil when they wrote none.
    public var bio: String?
    /// The media id of their photo; nil without one.
    public var photo: String?

    /// Creates the value.
    public init(user: User, bio: String? = nil, photo: String? = nil) {
        self.user = user
        self.bio = bio
        self.photo = photo
    }
}

/// A change to a profile: nil fields are kept; for `bio` and `photo`, `.some(nil)` removes the value.
public struct ProfileChange: Sendable, Equatable {
    /// The new display name, already normalised.
    public var name: String?
    /// The new bio (`.some(nil)` removes it).
    public var bio: String??
    /// The new photo's media id (`.some(nil)` removes it).
    public var photo: String??

    /// Creates the value.
    public init(name: String? = nil, bio: String?? = nil, photo: String?? = nil) {
        self.name = name
        self.bio = bio
        self.photo = photo
    }
}

/// Why the store refused a profile write.
public enum ProfileStoreError: Error, Equatable, Sendable {
    /// The photo's media id names no upload of the user.
    case mediaNotFound
}

/// Durable storage for profiles.
public protocol ProfileStore: Sendable {
    /// A user's profile; nil when there is no such user.
    func profile(id: Int64) async throws -> Profile?
    /// Applies `change` to the user's profile in one transaction and returns the profile as stored; nil when there
    /// is no such user. Throws `ProfileStoreError.mediaNotFound` (nothing written) when the new photo is not an
    /// upload of the user.
    func updateProfile(userID: Int64, _ change: ProfileChange) async throws -> Profile?
}
