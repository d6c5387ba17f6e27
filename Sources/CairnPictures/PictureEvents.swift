// Events (seed 004): hashtags pictures are posted to. A public event is open to all and is created by the first
// post that names it (or by `event.create`); a private one has a password, hashed with scrypt off the loop, and
// only its members — its creator and those who gave the password to `event.join`, remembered in the store — see its
// pictures. Its existence, title and owner are not secret (that is how one finds it to join); its pictures are.
// Only the creator may delete an event, which deletes its pictures with it.
public import CairnCore
import CairnErrorCodes
import CairnLoop
package import CairnSessions

/// The event ops. Loop thread only.
public final class PictureEvents {
    /// An event as the store answers it, with its password hash.
    typealias StoredEvent = (info: EventInfo, passwordHash: String?)

    /// The longest title, in bytes of UTF-8.
    public static let maxTitleBytes = 200
    /// Most events one search answers.
    public static let searchLimit = 50

    let store: (any PictureStore)?
    private let work: LoopWork
    let clock: any Clock
    private let sessions: Sessions
    let hasher: PasswordHasher
    let maxPasswordBytes: Int
    let pictures: Pictures
    /// Guesses at private events' passwords: per user and event, and per event across users, like a relic's.
    private let guesses: PasswordGuesses

    package init(
        store: (any PictureStore)?, accounts: Accounts, work: LoopWork, clock: any Clock, sessions: Sessions,
        pictures: Pictures, configuration: HubConfiguration
    ) {
        self.guesses = PasswordGuesses(
            failures: configuration.eventPasswordFailures, windowMs: configuration.eventPasswordWindowMs,
            freeBeforeBackoff: configuration.eventFailuresBeforeBackoff, baseMs: configuration.relicBackoffBaseMs,
            maxMs: configuration.relicBackoffMaxMs)
        self.store = store
        self.work = work
        self.clock = clock
        self.sessions = sessions
        self.hasher = accounts.hasher
        self.maxPasswordBytes = accounts.rules.maxPasswordBytes
        self.pictures = pictures
    }

    /// The event `tag` if `viewer` may see its pictures: `not_found` when missing, `forbidden` when private and
    /// not joined.
    static func member(_ store: any PictureStore, tag: String, viewer: Int64) async throws(DomainError) -> EventInfo {
        guard let found = try await Pictures.call({ try await store.event(tag: tag, viewer: viewer) }) else {
            throw DomainError(.notFound, "no event #\(tag)")
        }
        guard found.info.member else {
            throw DomainError(.forbidden, "#\(tag) is a private event: join it (event.join) with its password first")
        }
        return found.info
    }

    private func run<T: Sendable>(
        _ body: @escaping @Sendable (any PictureStore) async throws(DomainError) -> T, then: @escaping Outcome<T>
    ) {
        guard let store else { return then(.failure(Pictures.unavailable)) }
        work.run({ () async throws(DomainError) -> T in try await body(store) }, then: then)
    }

    /// Creates an event; with a password it is private.
    public func create(
        _ caller: Caller, tag rawTag: String, title rawTitle: String?, password: String?,
        _ done: @escaping Outcome<EventInfo>
    ) {
        let user = caller.user
        if user.isGuest && !pictures.settings.guestsMayPost {
            return done(.failure(DomainError(.forbidden, "guests may not create events; register an account")))
        }
        let tag: String
        do { tag = try EventTag.canonical(rawTag) } catch { return done(.failure(error)) }
        var title = rawTitle?.trimmingWhitespace()
        if title?.isEmpty == true { title = nil }
        if let title {
            guard title.utf8.count <= Self.maxTitleBytes else {
                return done(.failure(.badRequest("field 'title' must be at most \(Self.maxTitleBytes) bytes")))
            }
            guard !title.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                return done(.failure(.badRequest("field 'title' must not contain control characters")))
            }
        }
        if let password, password.isEmpty || password.utf8.count > maxPasswordBytes {
            return done(.failure(.badRequest("field 'password' must be 1 to \(maxPasswordBytes) bytes")))
        }
        if password != nil, let refusal = sessions.spendPasswordCheck(caller.connection) {
            return done(.failure(refusal))
        }
        let hasher = self.hasher
        let now = clock.now()
        let checkedTitle = title
        run(
            { store async throws(DomainError) -> EventInfo in
                let title = checkedTitle
                var hash: String?
                if let password { hash = await hasher.hash(password) }
                let new = NewEvent(tag: tag, title: title, owner: user.id, passwordHash: hash, createdAt: now)
                return try await Pictures.call { try await store.createEvent(new) }
            }, then: done)
    }

    /// Makes the caller a member of the private event `tag` when `password` is its password. The event is read
    /// first, so a public event or one the caller belongs to costs no password check and counts nothing; a guess
    /// at a private one counts against the caller (per event) and the event (across users) before scrypt judges
    /// it, and is refused `rate_limited` with `retry_after_ms` while either is backing off.
    public func join(_ caller: Caller, tag rawTag: String, password: String?, _ done: @escaping Outcome<EventInfo>) {
        let tag: String
        do { tag = try EventTag.canonical(rawTag) } catch { return done(.failure(error)) }
        if let password, password.utf8.count > maxPasswordBytes {
            return done(.failure(.badRequest("field 'password' must be at most \(maxPasswordBytes) bytes")))
        }
        let user = caller.user.id
        run(
            { store async throws(DomainError) -> StoredEvent in
                guard let found = try await Pictures.call({ try await store.event(tag: tag, viewer: user) }) else {
                    throw DomainError(.notFound, "no event #\(tag)")
                }
                return found
            },
            then: { result in
                switch result {
                case .failure(let error): done(.failure(error))
                case .success(let found): self.guess(caller, found, password: password, done)
                }
            })
    }

    /// The second half of `join`, on the loop with the event read: counts the guess, then has scrypt judge it.
    private func guess(
        _ caller: Caller, _ found: StoredEvent, password: String?, _ done: @escaping Outcome<EventInfo>
    ) {
        let tag = found.info.tag
        if found.info.member { return done(.success(found.info)) }
        guard let password else {
            return done(.failure(.badRequest("missing field 'password' (#\(tag) is a private event)")))
        }
        let event = found.info.id
        let user = caller.user.id
        let now = clock.now()
        if let refusal = guesses.begin(
            user: user, thing: event, now: now, what: "#\(tag)",
            spendBudget: { sessions.spendPasswordCheck(caller.connection) })
        {
            return done(.failure(refusal))
        }
        let hasher = self.hasher
        run(
            { store async throws(DomainError) -> Bool in
                guard await hasher.verify(password, against: found.passwordHash) else { return false }
                try await Pictures.call { try await store.join(event: event, user: user, at: now) }
                return true
            },
            then: { result in
                switch result {
                case .failure(let error):
                    // Not judged (the store failed): the guess does not count.
                    self.guesses.unjudged(user: user, thing: event, at: now)
                    done(.failure(error))
                case .success(false):
                    done(.failure(DomainError(.wrongPassword, "wrong password for #\(tag)")))
                case .success(true):
                    // The right password: this user needs no more guesses here, and the event no back-off.
                    self.guesses.succeeded(user: user, thing: event)
                    var info = found.info
                    info.member = true
                    done(.success(info))
                }
            })
    }

    /// One event.
    public func get(_ caller: Caller, tag rawTag: String, _ done: @escaping Outcome<EventInfo>) {
        let tag: String
        do { tag = try EventTag.canonical(rawTag) } catch { return done(.failure(error)) }
        let user = caller.user.id
        run(
            { store async throws(DomainError) -> EventInfo in
                guard let found = try await Pictures.call({ try await store.event(tag: tag, viewer: user) }) else {
                    throw DomainError(.notFound, "no event #\(tag)")
                }
                return found.info
            }, then: done)
    }

    /// Events whose tag or title contains `q` (a leading `#` is ignored).
    public func search(_ caller: Caller, query q: String, _ done: @escaping Outcome<[EventInfo]>) {
        var text = Substring(q.trimmingWhitespace())
        if text.hasPrefix("#") { text = text.dropFirst() }
        guard !text.isEmpty, text.utf8.count <= 200 else {
            return done(.failure(.badRequest("field 'q' must be 1–200 bytes")))
        }
        let folded = text.lowercased()
        let user = caller.user.id
        run(
            { store async throws(DomainError) -> [EventInfo] in
                try await Pictures.call {
                    try await store.searchEvents(text: folded, viewer: user, limit: Self.searchLimit)
                }
            }, then: done)
    }

    /// Deletes one of the caller's events with its pictures.
    public func delete(_ caller: Caller, tag rawTag: String, _ done: @escaping Outcome<String>) {
        let tag: String
        do { tag = try EventTag.canonical(rawTag) } catch { return done(.failure(error)) }
        let user = caller.user.id
        run(
            { store async throws(DomainError) -> Int64 in
                guard let found = try await Pictures.call({ try await store.event(tag: tag, viewer: user) }) else {
                    throw DomainError(.notFound, "no event #\(tag)")
                }
                guard found.info.owner.id == user else {
                    throw DomainError(.notOwner, "#\(tag) is not your event: only its creator may delete it")
                }
                try await Pictures.call { try await store.deleteEvent(id: found.info.id) }
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
}
