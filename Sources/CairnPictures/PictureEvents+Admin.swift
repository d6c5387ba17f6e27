// An admin's change to an event (issue 14, `admin.event.update`), or its deletion (`admin.event.delete`, seed 004's
// "delete event" course for admins). A change: its title, its password (set or changed, hashed
// with scrypt off the loop like `event.create`), or its visibility. Whether an event is private is copied into each
// of its pictures (so pages read visibility from the indexes alone): the store rewrites those copies in the same
// transaction as the event and its audit line (never the password). Members stay members when the password
// changes (the password guards new joins only); an event made private keeps everyone who posted to it as a member,
// so nobody loses sight of their own pictures. Once committed, watchers of the event who are not members stop
// watching it; nearby watchers are safe already, since a push is decided from the members the post reads.
import CairnAdmin
public import CairnCore
import CairnErrorCodes
import CairnLoop
import CairnSessions

/// One field of a change: left as it is, cleared, or set.
public enum FieldChange<Value: Sendable & Equatable>: Sendable, Equatable {
    /// Unchanged (the field was absent).
    case keep
    /// Cleared (the field was null).
    case clear
    /// Set to this value.
    case set(Value)
}

/// An admin's request to change an event, as read from the wire.
public struct EventChange: Sendable, Equatable {
    /// The new title (`clear`: no title).
    public var title: FieldChange<String>
    /// The new password (`clear`: the event becomes public).
    public var password: FieldChange<String>
    /// The visibility asked for, if any: false makes it public, true private (with a password given or kept).
    public var isPrivate: Bool?

    /// Creates the value.
    public init(title: FieldChange<String>, password: FieldChange<String>, isPrivate: Bool?) {
        self.title = title
        self.password = password
        self.isPrivate = isPrivate
    }
}

/// A checked change of an event, for the store.
public struct EventUpdate: Sendable, Equatable {
    /// The event.
    public var event: Int64
    /// The new title (`clear`: no title).
    public var title: FieldChange<String>
    /// The new scrypt hash (`clear`: public; `set`: private with this password).
    public var passwordHash: FieldChange<String>
    /// When (ms): the join time of the posters made members when the event becomes private.
    public var at: Int64

    /// Creates the value.
    public init(event: Int64, title: FieldChange<String>, passwordHash: FieldChange<String>, at: Int64) {
        self.event = event
        self.title = title
        self.passwordHash = passwordHash
        self.at = at
    }
}

extension PictureEvents {
    /// Changes the event `tag` as an admin asks; answers it as the admin now sees it.
    public func update(
        _ caller: Caller, tag rawTag: String, _ change: EventChange, _ done: @escaping Outcome<EventInfo>
    ) {
        guard let store, let administration = pictures.administration else {
            return done(.failure(Administration.notAdmin))
        }
        let tag: String
        do { tag = try EventTag.canonical(rawTag) } catch { return administration.refuse(caller, error, done) }
        if change.title == .keep && change.password == .keep && change.isPrivate == nil {
            let message = "nothing to update: give at least one of the fields 'title', 'password' and 'private'"
            return administration.refuse(caller, .badRequest(message), done)
        }
        var title = change.title
        if case .set(let raw) = title {
            let trimmed = raw.trimmingWhitespace()
            if let problem = Self.titleProblem(trimmed) { return administration.refuse(caller, problem, done) }
            title = trimmed.isEmpty ? .clear : .set(trimmed)
        }
        switch (change.password, change.isPrivate) {
        case (.set(let password), _):
            if password.isEmpty || password.utf8.count > maxPasswordBytes {
                let message = "field 'password' must be 1 to \(maxPasswordBytes) bytes"
                return administration.refuse(caller, .badRequest(message), done)
            }
            if change.isPrivate == false {
                let message = "field 'private' is false but field 'password' sets a password (which makes it private)"
                return administration.refuse(caller, .badRequest(message), done)
            }
        case (.clear, true?):
            let message = "field 'private' is true but field 'password' is null (which makes the event public)"
            return administration.refuse(caller, .badRequest(message), done)
        default: break
        }
        let hasher = self.hasher
        let newTitle = title
        let now = clock.now()
        let admin = caller.user
        administration.asAdmin(
            caller,
            { _ async throws(DomainError) -> (info: EventInfo, members: Set<Int64>?) in
                guard let found = try await Pictures.call({ try await store.event(tag: tag, viewer: admin.id) }) else {
                    throw DomainError(.notFound, "no event #\(tag)")
                }
                var hash = FieldChange<String>.keep
                switch (change.password, change.isPrivate) {
                case (.set(let password), _): hash = .set(await hasher.hash(password))
                case (.clear, _), (.keep, false?): if found.info.isPrivate { hash = .clear }
                case (.keep, true?):
                    guard found.info.isPrivate else {
                        throw DomainError.badRequest("field 'password' is needed to make #\(tag) private")
                    }
                case (.keep, nil): break
                }
                let update = EventUpdate(event: found.info.id, title: newTitle, passwordHash: hash, at: now)
                let audit = AuditEntry(
                    at: now, admin: admin, action: "event.update", targetKind: "event", targetID: found.info.id,
                    targetName: tag, reason: nil, detail: Self.auditDetail(title: newTitle, hash: hash))
                guard let updated = try await Pictures.call({ try await store.updateEvent(update, audit: audit) })
                else { throw DomainError(.notFound, "no event #\(tag)") }
                return updated
            },
            then: { result in
                switch result {
                case .failure(let error): done(.failure(error))
                case .success(let updated):
                    if let members = updated.members { self.pictures.eventPrivate(updated.info.id, members: members) }
                    done(.success(updated.info))
                }
            })
    }

    /// Deletes the event `tag` as an admin (seed 004's "delete event", `admin.event.delete`): the event, its
    /// memberships and its pictures with their likes and reports, whatever reports are open (the admin's decision is
    /// the review), audited with `reason` and the number of pictures deleted. Answers the canonical tag.
    public func deleteAsAdmin(
        _ caller: Caller, tag rawTag: String, reason rawReason: String?, _ done: @escaping Outcome<String>
    ) {
        guard let store, let administration = pictures.administration else {
            return done(.failure(Administration.notAdmin))
        }
        let tag: String
        do { tag = try EventTag.canonical(rawTag) } catch { return administration.refuse(caller, error, done) }
        let trimmed = rawReason?.trimmingWhitespace()
        let reason = trimmed?.isEmpty == true ? nil : trimmed
        if let reason, reason.utf8.count > Administration.maxReasonBytes {
            let message = "field 'reason' must be at most \(Administration.maxReasonBytes) bytes"
            return administration.refuse(caller, .badRequest(message), done)
        }
        let now = clock.now()
        let admin = caller.user
        administration.asAdmin(
            caller,
            { _ async throws(DomainError) -> Int64 in
                guard let found = try await Pictures.call({ try await store.event(tag: tag, viewer: admin.id) }) else {
                    throw DomainError(.notFound, "no event #\(tag)")
                }
                let audit = AuditEntry(
                    at: now, admin: admin, action: "event.delete", targetKind: "event", targetID: found.info.id,
                    targetName: tag, reason: reason, detail: "pictures=\(found.info.pictures)")
                guard try await Pictures.call({ try await store.deleteEventAsAdmin(id: found.info.id, audit: audit) })
                else { throw DomainError(.notFound, "no event #\(tag)") }
                return found.info.id
            },
            then: { result in
                switch result {
                case .failure(let error): done(.failure(error))
                case .success(let event):
                    self.pictures.eventGone(event)
                    done(.success(tag))
                }
            })
    }

    /// What is wrong with a (trimmed) title, if anything.
    static func titleProblem(_ title: String) -> DomainError? {
        if title.utf8.count > maxTitleBytes {
            return .badRequest("field 'title' must be at most \(maxTitleBytes) bytes")
        }
        if title.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return .badRequest("field 'title' must not contain control characters")
        }
        return nil
    }

    /// The audit line's detail: what changed, never the password.
    static func auditDetail(title: FieldChange<String>, hash: FieldChange<String>) -> String? {
        var parts: [String] = []
        switch title {
        case .keep: break
        case .clear: parts.append("title=none")
        case .set(let value): parts.append("title=\(value)")
        }
        switch hash {
        case .keep: break
        case .clear: parts.append("private=false")
        case .set: parts.append("private=true password=changed")
        }
        return parts.isEmpty ? nil : parts.joined(separator: " ")
    }
}
