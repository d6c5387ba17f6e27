// Relics (seed 003): messages with optional media left at a place, openable only from within their radius, for a
// while or for good, optionally behind a password. The server enforces every rule: a marker never carries the
// content, opening checks the caller's last reported position against the radius, the password (hashed, off the
// loop, rate-limited per user and relic, backed off per relic across users, and spent from the connection's budget
// of password checks) and the expiry, which is checked on every read as well as swept once a second, so an expired
// relic is never served even before the sweep removes it.
//
// Places come from the live map's trusted position (`LiveMap+Trust`), never from a fix it did not confirm, so a
// spoofed position opens nothing. Floods are bounded: one move announces at most `relicAppearPerMove` relics (the
// nearest; `relic.nearby` lists the rest), and a user may keep only so many live relics in all and within one area,
// guests far fewer than members.
//
// A relic is committed before its create is answered and deleted before its delete is answered. Memory holds only
// markers (`RelicBook`) and their points (a relics index of their own); text, media and password hashes are read
// from the store when someone is allowed to open one. Positions come from the live map, who is connected from
// the sessions.
public import CairnCore
import CairnErrorCodes
package import CairnGeo
package import CairnLiveMap
package import CairnLoop
public import CairnMedia
package import CairnSessions
package import CairnSocial
import CairnSpatial
import Logging

/// What the caller asks to leave.
public struct RelicRequest: Sendable {
    /// The text (may be empty when media is given).
    public var text: String
    /// The radius in metres.
    public var radius: Double
    /// Seconds to live; nil for a permanent relic.
    public var ttl: Int64?
    /// A password to open it.
    public var password: String?
    /// An uploaded media id of the caller's.
    public var media: String?
    /// An explicit place near the caller's position.
    public var lat: Double?
    /// See `lat`.
    public var lon: Double?

    /// Creates the value.
    public init(
        text: String, radius: Double, ttl: Int64?, password: String?, media: String?, lat: Double?,
        lon: Double?
    ) {
        self.text = text
        self.radius = radius
        self.ttl = ttl
        self.password = password
        self.media = media
        self.lat = lat
        self.lon = lon
    }
}

/// A relic with what the caller may see of its content.
public struct RelicView: Sendable {
    /// Where the relic stands in its life, for `relic.mine`.
    public enum State: String, Sendable {
        /// Not expired.
        case live
        /// Expired, kept until the retention ends.
        case expired
    }

    /// The relic.
    public var record: RelicRecord
    /// A signed URL for its media, when it has media and a signer is set.
    public var mediaURL: String?
    /// Its state, for listings.
    public var state: State?
    /// The creator's account, when opened.
    public var creator: User?
}

/// A marker near the caller, for browsing.
public struct NearbyRelic: Sendable {
    /// The marker.
    public var marker: RelicMarker
    /// Metres from the caller.
    public var distance: Double
}

/// Relic markers, their index, expiry and the relic ops. Loop thread only.
public final class Relics {
    let store: any RelicStore
    private let users: any SocialStore
    private let hasher: PasswordHasher
    private let maxPasswordBytes: Int
    let work: LoopWork
    let clock: any Clock
    private let sessions: Sessions
    private let social: Social
    private let liveMap: LiveMap
    private let configuration: HubConfiguration
    package var events: (any HubEvents)?

    var book: RelicBook
    private var index: LayeredIndex
    private let guesses: PasswordGuesses
    /// Relics entered by the current move, reused so roaming allocates nothing in steady state.
    private var entered: [(marker: RelicMarker, distance: Double)] = []
    private var purging = false
    /// Creates in flight per user (they count against the live-relic limit).
    private var pendingCreates: [Int64: Int] = [:]
    private var lastPurgeAt: Int64 = .min / 2
    /// Other nodes (nil: a single node): told of every relic created or deleted here.
    package var remote: (any RemoteRelics)?
    /// Relic ids added or removed while a resync read is under way (nil: none running).
    var touchedRelics: Set<Int64>?
    /// Relics deleted recently, here or elsewhere (a create heard, or read, just before must not bring one back).
    var recentlyDeleted = RecentSet<Int64>()
    /// Relic resyncs asked for while one reads.
    var relicResyncsWaiting: [(Result<(added: Int, removed: Int), DomainError>) -> Void] = []
    /// Signs media URLs handed to those allowed to see the media; without one, relics show media ids only.
    public var mediaSigner: (any MediaSigner)?

    package init(
        store: any RelicStore, users: any SocialStore, accounts: Accounts, work: LoopWork, clock: any Clock,
        sessions: Sessions, social: Social, liveMap: LiveMap, configuration: HubConfiguration
    ) {
        self.store = store
        self.users = users
        self.hasher = accounts.hasher
        self.maxPasswordBytes = accounts.rules.maxPasswordBytes
        self.work = work
        self.clock = clock
        self.sessions = sessions
        self.social = social
        self.liveMap = liveMap
        self.configuration = configuration
        self.book = RelicBook(coverCellSize: configuration.relicCoverCellSize)
        self.index = LayeredIndex(cellSize: configuration.indexCellSize)
        self.guesses = PasswordGuesses(
            failures: configuration.relicPasswordFailures, windowMs: configuration.relicPasswordWindowMs,
            freeBeforeBackoff: configuration.relicFailuresBeforeBackoff, baseMs: configuration.relicBackoffBaseMs,
            maxMs: configuration.relicBackoffMaxMs)
    }

    /// Live relics in memory.
    public var count: Int { book.count }

    /// Restores the live relics; call once, before serving.
    package func restore(_ markers: [RelicMarker]) {
        for marker in markers { insert(marker) }
    }

    // MARK: Ops

    /// Leaves a relic at the caller's position (or an explicit point near it).
    public func create(_ caller: Caller, _ request: RelicRequest, _ done: @escaping Outcome<RelicView>) {
        let user = caller.user
        let limits = configuration
        let text = request.text
        let radius = request.radius
        let ttl = request.ttl
        let password = request.password
        let media = request.media
        guard text.utf8.count <= limits.relicTextLimit else {
            return done(.failure(.badRequest("field 'text' must be at most \(limits.relicTextLimit) bytes (UTF-8)")))
        }
        guard !text.trimmingWhitespace().isEmpty || media != nil else {
            return done(.failure(.badRequest("field 'text' must not be empty unless the relic carries media")))
        }
        guard limits.relicRadius.contains(radius) else {
            return done(
                .failure(
                    .badRequest(
                        "field 'radius' must be between \(Int(limits.relicRadius.lowerBound)) "
                            + "and \(Int(limits.relicRadius.upperBound)) m")))
        }
        if let ttl, !limits.relicTTLSeconds.contains(ttl) {
            return done(
                .failure(
                    .badRequest(
                        "field 'ttl' must be between \(limits.relicTTLSeconds.lowerBound) s "
                            + "and \(limits.relicTTLSeconds.upperBound) s (one year); omit it for a permanent relic")))
        }
        if let password, password.isEmpty || password.utf8.count > maxPasswordBytes {
            return done(.failure(.badRequest("field 'password' must be 1 to \(maxPasswordBytes) bytes")))
        }
        if let media, !MediaLinks.isMediaID(media) {
            return done(.failure(.badRequest("field 'media' must be a media id returned by POST /v1/media")))
        }
        guard (request.lat == nil) == (request.lon == nil) else {
            return done(.failure(.badRequest("fields 'lat' and 'lon' go together")))
        }
        let now = clock.now()
        // Ghost mode: a relic is a public statement of where one stands, so none is left while paused.
        if let refusal = social.refusalWhilePaused(user.id, now: now, what: "a relic", toDo: "to leave one") {
            return done(.failure(refusal))
        }
        let here: GeoPoint
        do { here = try lastPoint(of: user, doing: "leaving a relic") } catch { return done(.failure(error)) }
        var place = here
        if let lat = request.lat, let lon = request.lon {
            guard let asked = GeoPoint(lat: lat, lon: lon) else {
                return done(.failure(.badRequest("fields 'lat' and 'lon' must be within [-90, 90] and [-180, 180]")))
            }
            let apart = here.distance(to: asked)
            guard apart <= limits.relicPlacementSlack else {
                let slack = Int(limits.relicPlacementSlack)
                return done(
                    .failure(
                        DomainError(
                            .tooFar,
                            "a relic is left where you are: that point is "
                                + "\(Int(apart.rounded())) m from your last position (at most \(slack) m)"
                        )
                        .with(.init("distance", Int64(apart.rounded())), .init("radius", Int64(slack)))))
            }
            place = asked
        }
        let pending = pendingCreates[user.id] ?? 0
        let perUser = user.isGuest ? limits.relicsPerGuest : limits.relicsPerUser
        guard book.count(of: user.id) + pending < perUser else {
            return done(
                .failure(
                    DomainError(
                        .rateLimited,
                        "you already have \(perUser) live relics; delete one or let one expire")))
        }
        let perArea = user.isGuest ? limits.relicsPerAreaGuest : limits.relicsPerArea
        // Creates in flight count as if they were here: they finish within moments.
        guard liveRelics(of: user.id, within: limits.relicAreaRadius, of: place) + pending < perArea else {
            return done(
                .failure(
                    DomainError(
                        .rateLimited,
                        "you already have \(perArea) live relics within "
                            + "\(Int(limits.relicAreaRadius)) m of here; delete one or let one expire")))
        }
        if password != nil, let refusal = sessions.spendPasswordCheck(caller.connection) {
            return done(.failure(refusal))
        }
        // Hiding from (or approximate to) some friend: the relic never names its creator to anyone else.
        let new = NewRelic(
            creatorID: user.id, lat: place.lat, lon: place.lon, radius: radius, text: text,
            mediaID: media, passwordHash: nil, createdAt: now, expiresAt: ttl.map { now + $0 * 1000 },
            creatorHidden: social.restricts(user.id, now: now))
        let store = self.store
        let hasher = self.hasher
        let creator = user.id
        // Creates in flight count against the limit too: several connections of one user may create at once.
        pendingCreates[creator, default: 0] += 1
        work.run(
            { () async throws(DomainError) -> RelicRecord in
                var relic = new
                if let password { relic.passwordHash = await hasher.hash(password) }
                do {
                    return relic.record(id: try await store.createRelic(relic))
                } catch RelicStoreError.mediaNotFound {
                    throw DomainError(.notFound, "no media '\(media ?? "")' was uploaded by you")
                } catch {
                    hubLogger.error("storage failure: \(error)")
                    throw DomainError(.internal, "Storage failure; the relic was not left")
                }
            },
            then: { result in
                let left = (self.pendingCreates[creator] ?? 1) - 1
                self.pendingCreates[creator] = left > 0 ? left : nil
                if case .success(let record) = result {
                    self.insert(record.marker)
                    self.remote?.relicCreated(record.marker.id)
                }
                done(result.map { self.view($0, state: nil, now: now, for: creator) })
            })
    }

    /// The live relics around the caller, nearest first; the second value is true when some were left out.
    public func nearby(_ caller: Caller, radius: Double?) throws(DomainError) -> (
        relics: [NearbyRelic], truncated: Bool
    ) {
        let radius = radius ?? configuration.relicBrowseRadius
        guard radius > 0 && radius <= configuration.relicBrowseRadiusMax else {
            throw .badRequest("field 'radius' must be above 0 and at most \(Int(configuration.relicBrowseRadiusMax)) m")
        }
        let here = try lastPoint(of: caller.user, doing: "looking for relics")
        let now = clock.now()
        var found: [NearbyRelic] = []
        index.forEach(in: .relics, within: radius, of: here) { relic, _, distance in
            if let marker = book.live(relic, at: now) {
                found.append(NearbyRelic(marker: marker.shown(to: caller.user.id), distance: distance))
            }
        }
        found.sort { $0.distance < $1.distance || ($0.distance == $1.distance && $0.marker.id < $1.marker.id) }
        let truncated = found.count > configuration.relicNearbyLimit
        if truncated { found.removeLast(found.count - configuration.relicNearbyLimit) }
        book.show(found.map(\.marker.id), to: caller.connection)
        return (found, truncated)
    }

    /// Opens a relic: the caller must stand within its radius (its creator need not) and know its password.
    public func open(_ caller: Caller, relic relicID: Int64, password: String?, _ done: @escaping Outcome<RelicView>) {
        let user = caller.user
        let now = clock.now()
        let store = self.store
        let users = self.users
        guard let marker = book.live(relicID, at: now) else {
            if book.markers[relicID] != nil {
                expire(now: now)  // due but not yet swept: sweep now, so everyone hears of it
                return done(.failure(DomainError(.expired, "relic \(relicID) has expired")))
            }
            // Not live: tell an expired relic (kept until the retention ends) from one that never was.
            work.run(
                { () async throws(DomainError) -> Bool in
                    let record = try await LoopWork.storage { try await store.relic(id: relicID) }
                    return record?.marker.isExpired(at: now) ?? false
                },
                then: { result in
                    switch result {
                    case .failure(let error): done(.failure(error))
                    case .success(true): done(.failure(DomainError(.expired, "relic \(relicID) has expired")))
                    case .success(false): done(.failure(DomainError(.notFound, "no relic \(relicID)")))
                    }
                })
            return
        }
        var guessed = false
        if marker.creatorID != user.id {
            let here: GeoPoint
            do { here = try lastPoint(of: user, doing: "opening a relic") } catch { return done(.failure(error)) }
            let distance = here.distance(to: GeoPoint(lat: marker.lat, lon: marker.lon) ?? here)
            guard distance <= marker.radius else {
                return done(
                    .failure(
                        DomainError(
                            .tooFar,
                            "you are \(Int(distance.rounded())) m away; relic "
                                + "\(relicID) opens within \(Int(marker.radius)) m"
                        )
                        .with(.init("distance", Int64(distance.rounded())), .init("radius", Int64(marker.radius)))))
            }
            if marker.locked {
                guard let password, !password.isEmpty else {
                    return done(
                        .failure(
                            DomainError(
                                .wrongPassword,
                                "relic \(relicID) is locked: send its 'password'")))
                }
                if let refusal = guesses.begin(
                    user: user.id, thing: relicID, now: now, what: "this relic",
                    spendBudget: { sessions.spendPasswordCheck(caller.connection) })
                {
                    return done(.failure(refusal))
                }
                guessed = true
            }
        }
        let attemptedAt = now
        let hasher = self.hasher
        let checksPassword = guessed
        let namesCreator = !marker.creatorHidden || marker.creatorID == user.id
        work.run(
            { () async throws(DomainError) -> (RelicRecord?, User?, Bool) in
                guard let record = try await LoopWork.storage({ try await store.relic(id: relicID) }) else {
                    return (nil, nil, false)
                }
                var allowed = true
                if checksPassword {
                    allowed = await hasher.verify(password ?? "", against: record.passwordHash)
                }
                let creator = allowed && namesCreator ? try? await users.user(id: record.marker.creatorID) : nil
                return (record, creator, allowed)
            },
            then: { result in
                guard case .success(let (record, creator, allowed)) = result else {
                    if case .failure(let error) = result { done(.failure(error)) }
                    return
                }
                let now = self.clock.now()
                // Gone or expired while the store was read: no password was judged, so the attempt does not count.
                let unjudged = {
                    if checksPassword { self.guesses.unjudged(user: user.id, thing: relicID, at: attemptedAt) }
                }
                guard let record else {
                    unjudged()
                    return done(.failure(DomainError(.notFound, "no relic \(relicID)")))
                }
                guard self.book.live(relicID, at: now) != nil else {
                    unjudged()
                    if self.book.markers[relicID] != nil || record.marker.isExpired(at: now) {
                        self.expire(now: now)
                        return done(.failure(DomainError(.expired, "relic \(relicID) has expired")))
                    }
                    return done(.failure(DomainError(.notFound, "no relic \(relicID)")))
                }
                guard allowed else {
                    return done(.failure(DomainError(.wrongPassword, "wrong password for relic \(relicID)")))
                }
                // The right password: this user needs no more guesses at this relic, and the relic no back-off.
                if checksPassword { self.guesses.succeeded(user: user.id, thing: relicID) }
                var view = self.view(record, state: nil, now: now, for: user.id)
                view.creator = creator
                done(.success(view))
            })
    }

    /// The caller's relics, newest first, a page at a time; the second value is true when older ones exist.
    public func mine(
        _ caller: Caller, before: Int64?, limit: Int64?,
        _ done: @escaping Outcome<(relics: [RelicView], more: Bool)>
    ) {
        let limit = limit ?? Int64(configuration.relicMineLimit)
        guard limit >= 1 && limit <= Int64(configuration.relicMineLimit) else {
            return done(.failure(.badRequest("field 'limit' must be between 1 and \(configuration.relicMineLimit)")))
        }
        if let before, before <= 0 { return done(.failure(.badRequest("field 'before' must be a relic id"))) }
        let store = self.store
        let me = caller.user.id
        work.run(
            { () async throws(DomainError) -> [RelicRecord] in
                try await LoopWork.storage {
                    try await store.relics(creator: me, before: before, limit: Int(limit) + 1)
                }
            },
            then: { result in
                let now = self.clock.now()
                done(
                    result.map { records in
                        let views = records.prefix(Int(limit)).map { record in
                            self.view(
                                record, state: record.marker.isExpired(at: now) ? .expired : .live, now: now, for: me)
                        }
                        return (Array(views), records.count > Int(limit))
                    })
            })
    }

    /// Deletes one of the caller's relics.
    public func delete(_ caller: Caller, relic relicID: Int64, _ done: @escaping Outcome<Int64>) {
        let me = caller.user.id
        if let marker = book.markers[relicID], marker.creatorID != me {
            return done(.failure(DomainError(.notOwner, "only its creator can delete relic \(relicID)")))
        }
        let store = self.store
        work.run(
            { () async throws(DomainError) -> Bool in
                guard let record = try await LoopWork.storage({ try await store.relic(id: relicID) }) else {
                    throw DomainError(.notFound, "no relic \(relicID)")
                }
                guard record.marker.creatorID == me else {
                    throw DomainError(.notOwner, "only its creator can delete relic \(relicID)")
                }
                _ = try await LoopWork.storage { try await store.deleteRelic(id: relicID) }
                return true
            },
            then: { result in
                if case .success = result {
                    self.recentlyDeleted.insert(relicID)
                    self.remove(relicID, reason: "deleted")
                    self.remote?.relicDeleted(relicID)
                }
                done(result.map { _ in relicID })
            })
    }

    // MARK: Live state

    /// Adds a stored relic to memory and tells the connected users standing inside it.
    func insert(_ marker: RelicMarker) {
        // Already shown (a resync or a message may have brought it first): its audience stays as it is.
        guard book.markers[marker.id] == nil, let centre = GeoPoint(lat: marker.lat, lon: marker.lon) else { return }
        touchedRelics?.insert(marker.id)
        book.add(marker)
        index.upsert(marker.id, at: centre, in: .relics)
        var standing: [Int64] = []
        liveMap.forEachUser(within: marker.radius, of: centre) { user in
            // The index holds latest fixes; relics believe only trusted ones.
            guard sessions.isOnline(user), let trusted = liveMap.trustedPoint(of: user),
                trusted.distance(to: centre) <= marker.radius
            else { return }
            standing.append(user)
        }
        for user in standing where book.enter(user, marker.id) {
            events?.publish(.relicAppeared(marker.shown(to: user)), toUsers: [user], excluding: nil)
        }
    }

    /// Removes a relic from memory and tells whoever saw it that it vanished.
    func remove(_ relicID: Int64, reason: String?) {
        touchedRelics?.insert(relicID)
        _ = index.remove(relicID, from: .relics)
        guesses.forget(relicID)
        guard let (marker, audience) = book.remove(relicID) else { return }
        announce(.relicVanished(id: marker.id, reason: reason), of: marker, to: audience)
    }

    /// Sweeps relics whose time is up (the tick calls this once a second; reads check expiry themselves).
    package func expire(now: Int64) {
        var gone: [(RelicMarker, RelicBook.Audience)] = []
        book.sweep(now: now) { marker, audience in gone.append((marker, audience)) }
        for (marker, audience) in gone {
            _ = index.remove(marker.id, from: .relics)
            guesses.forget(marker.id)
            announce(.relicExpired(id: marker.id), of: marker, to: audience)
        }
    }

    /// Tells the users inside a relic, its creator and the connections shown it that it is gone; each connection
    /// hears it once.
    private func announce(_ event: HubEvent, of marker: RelicMarker, to audience: RelicBook.Audience) {
        var connections = audience.connections
        for user in audience.users.union([marker.creatorID]) {
            for connection in sessions.connections(of: user) { connections.insert(connection) }
        }
        guard !connections.isEmpty else { return }
        events?.publish(event, toConnections: Array(connections))
    }

    /// A user's trusted position moved: if connected, `relic.appear` for the relics they stepped into (at most
    /// `relicAppearPerMove`, the nearest), `relic.vanish` for each they were told of and left. With no relics this
    /// costs one comparison.
    package func roam(_ user: Int64, to point: GeoPoint, now: Int64) {
        guard book.count > 0, sessions.isOnline(user) else { return }
        var found: [(marker: RelicMarker, distance: Double)] = []
        swap(&found, &entered)  // owned, so appending reuses its capacity instead of copying
        found.removeAll(keepingCapacity: true)
        book.roam(
            user, to: point, now: now,
            entered: { marker in
                let centre = GeoPoint(lat: marker.lat, lon: marker.lon) ?? point
                found.append((marker, centre.distance(to: point)))
            },
            left: { relic in
                self.events?.publish(.relicVanished(id: relic, reason: nil), toUsers: [user], excluding: nil)
            })
        let limit = configuration.relicAppearPerMove
        if found.count > limit {
            found.sort { $0.distance < $1.distance || ($0.distance == $1.distance && $0.marker.id < $1.marker.id) }
        }
        for item in found.prefix(limit) {
            book.tell(user, item.marker.id)
            events?.publish(.relicAppeared(item.marker.shown(to: user)), toUsers: [user], excluding: nil)
        }
        entered = found
    }

    /// Forgets what a connection was shown (it closed or changed account).
    package func forget(connection: ConnectionID) { book.forget(connection: connection) }

    /// Forgets which relics a user stands in (they went offline).
    package func forget(user: Int64) { book.forget(user: user) }

    /// Removes from memory the relics of purged guest accounts (already deleted from the store), telling whoever
    /// saw them that they vanished.
    package func purged(_ relicIDs: [Int64]) {
        for id in relicIDs {
            recentlyDeleted.insert(id)
            remove(id, reason: "deleted")
            remote?.relicDeleted(id)  // the other nodes find nothing left to purge
        }
    }

    /// Purges relics expired longer ago than the retention, off the loop, at most once per purge interval.
    package func purgeOld(now: Int64) {
        guard !purging, now - lastPurgeAt >= configuration.relicPurgeIntervalMs else { return }
        purging = true
        lastPurgeAt = now
        let store = self.store
        let cutoff = now - configuration.relicRetentionMs
        work.background(
            { try await store.purgeExpiredRelics(expiredBefore: cutoff) },
            then: { result in
                self.purging = false
                switch result {
                case .success(let count) where count > 0:
                    hubLogger.info("purged \(count) relic(s) expired before the retention period")
                case .success: break
                case .failure(let error): hubLogger.error("purging expired relics failed: \(error)")
                }
            })
    }

    // MARK: Helpers

    /// The caller's trusted position (see `LiveMap+Trust`).
    private func lastPoint(of user: User, doing what: String) throws(DomainError) -> GeoPoint {
        guard let point = liveMap.trustedPoint(of: user.id) else {
            if liveMap.hasUnconfirmedFix(user.id) {
                throw .badRequest(
                    "your position is not confirmed yet: report another 'pos' from where you are "
                        + "before \(what)")
            }
            throw .badRequest("no position yet: report one with 'pos' before \(what)")
        }
        return point
    }

    /// Live relics of `creator` within `radius` metres of `centre`.
    private func liveRelics(of creator: Int64, within radius: Double, of centre: GeoPoint) -> Int {
        guard book.count(of: creator) > 0 else { return 0 }
        var count = 0
        let now = clock.now()
        index.forEach(in: .relics, within: radius, of: centre) { relic, _, _ in
            if let marker = book.live(relic, at: now), marker.creatorID == creator { count += 1 }
        }
        return count
    }

    private func view(_ record: RelicRecord, state: RelicView.State?, now: Int64, for viewer: Int64) -> RelicView {
        let url = record.mediaID.flatMap { media in mediaSigner?.url(for: media, now: now) }
        var record = record
        record.marker = record.marker.shown(to: viewer)
        return RelicView(record: record, mediaURL: url, state: state, creator: nil)
    }
}
