// Profiles (seeds 000, 003): a display name, a bio and a photo that every signed-in user may read by id. The
// photo is an upload of its owner and is shown through a short-lived signed URL (like relic media); a user without
// one is drawn with the placeholder image the hub serves (`Placeholders.user`). The name follows registration's
// rules (`Accounts.normalizedName`); a rename reaches the caller's live sessions, so `whoami` and what friends
// see next agree with the reply. Every change is committed before the reply.
public import CairnCore
import CairnErrorCodes
import CairnLoop
public import CairnMedia
package import CairnSessions
import Logging

/// What the caller asks to change; nil fields are kept, and for `bio` and `photo` `.some(nil)` removes the value.
public struct ProfileRequest: Sendable {
    /// The new display name.
    public var name: String?
    /// The new bio.
    public var bio: String??
    /// The new photo, a media id the caller uploaded.
    public var photo: String??

    /// Creates the value.
    public init(name: String? = nil, bio: String?? = nil, photo: String?? = nil) {
        self.name = name
        self.bio = bio
        self.photo = photo
    }
}

/// A profile as shown: with a signed URL of its photo, when it has one and a signer is set.
public struct ProfileView: Sendable {
    /// The profile.
    public var profile: Profile
    /// A signed URL of the photo.
    public var photoURL: String?
}

/// Profile reads and changes. Loop thread only.
public final class Profiles {
    /// The longest bio, in bytes of UTF-8.
    public static let maxBioBytes = 500

    private let store: any ProfileStore
    private let accounts: Accounts
    private let work: LoopWork
    private let clock: any Clock
    private let sessions: Sessions
    /// Signs photo URLs; without one, profiles carry no `photo_url`.
    public var mediaSigner: (any MediaSigner)?

    package init(store: any ProfileStore, accounts: Accounts, work: LoopWork, clock: any Clock, sessions: Sessions) {
        self.store = store
        self.accounts = accounts
        self.work = work
        self.clock = clock
        self.sessions = sessions
    }

    /// Changes the caller's profile and answers it in full.
    public func set(_ caller: Caller, _ request: ProfileRequest, _ done: @escaping Outcome<ProfileView>) {
        var change = ProfileChange()
        do {
            if let name = request.name {
                change.name = try accounts.normalizedName(name, username: caller.user.username)
            }
            if let bio = request.bio { change.bio = .some(try Self.normalizedBio(bio)) }
        } catch {
            return done(.failure(error))
        }
        if let photo = request.photo {
            if let photo, !MediaLinks.isMediaID(photo) {
                let problem = "field 'photo' must be a media id returned by POST /v1/media, or null"
                return done(.failure(.badRequest(problem)))
            }
            change.photo = .some(photo)
        }
        let store = self.store
        let me = caller.user.id
        let pending = change
        work.run(
            { () async throws(DomainError) -> Profile in
                let stored: Profile?
                do {
                    stored = try await store.updateProfile(userID: me, pending)
                } catch ProfileStoreError.mediaNotFound {
                    throw DomainError(.notFound, "no media '\((request.photo ?? nil) ?? "")' was uploaded by you")
                } catch {
                    hubLogger.error("storage failure: \(error)")
                    throw DomainError.storage(error)
                }
                guard let stored else { throw DomainError(.notFound, "no user \(me)") }
                return stored
            },
            then: { result in
                if case .success(let profile) = result { self.sessions.renamed(profile.user) }
                done(result.map { self.view($0) })
            })
    }

    /// Any user's profile, by id. Every signed-in user (guests too) may read every account by id: what it shows
    /// is what its owner chose to show; guests are merely not found by search.
    public func get(_ caller: Caller, user: Int64, _ done: @escaping Outcome<ProfileView>) {
        guard user > 0 else { return done(.failure(.badRequest("field 'user' must be a user id"))) }
        let store = self.store
        work.run(
            { () async throws(DomainError) -> Profile in
                let found = try await LoopWork.storage { try await store.profile(id: user) }
                guard let found else { throw DomainError(.notFound, "no user \(user)") }
                return found
            },
            then: { result in done(result.map { self.view($0) }) })
    }

    /// A bio as stored: trimmed, at most `maxBioBytes` bytes of UTF-8, no control characters (line breaks
    /// included: it is shown on one line); empty → nil (removed).
    static func normalizedBio(_ bio: String?) throws(DomainError) -> String? {
        guard let bio else { return nil }
        let trimmed = bio.trimmingWhitespace()
        guard !trimmed.isEmpty else { return nil }
        guard trimmed.utf8.count <= maxBioBytes else {
            throw .badRequest("field 'bio' must be at most \(maxBioBytes) bytes (UTF-8)")
        }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .badRequest("field 'bio' must not contain control characters")
        }
        if let problem = NameText.invisibleProblem(in: trimmed) { throw .badRequest("field 'bio' \(problem)") }
        return trimmed
    }

    private func view(_ profile: Profile) -> ProfileView {
        let now = clock.now()
        return ProfileView(
            profile: profile, photoURL: profile.photo.flatMap { mediaSigner?.url(for: $0, now: now) })
    }
}
