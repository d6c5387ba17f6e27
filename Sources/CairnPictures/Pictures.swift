// Pictures (seed 004, PicShare): posting an uploaded image "nearby" (at the poster's last position) or to an
// event by hashtag, likes, reports, deletion, browsing nearby or an event's pictures in three orders with keyset
// cursors, search by caption words and hashtags, and live `picture.new` pushes to those watching an area or an event.
//
// Visibility has one rule everywhere (`PictureViewer.sees`): a picture hidden by reports reaches nobody, a picture
// its viewer reported reaches not that viewer, and a private event's picture reaches only the event's members —
// in pages, in search, by id (`forbidden`) and in pushes. Pages and search are decided by the store, which reads
// those facts in the same read as the pictures; pushes are decided here from the members the post returned.
//
// Memory holds only the watchers and the settings in force; every write is committed before its answer.
package import CairnAdmin
public import CairnCore
import CairnErrorCodes
import CairnGeo
package import CairnLiveMap
package import CairnLoop
public import CairnMedia
package import CairnSessions
package import CairnSocial

/// A page of pictures and the cursor of the next one (nil on the last page).
public struct PicturePage: Sendable, Equatable {
    /// The pictures, in order.
    public var pictures: [PictureView]
    /// The `cursor` that asks for the next page.
    public var cursor: String?
}

/// What a connection watches for `picture.new`.
public enum PictureWatch: Sendable, Equatable {
    /// Pictures posted within `radius` metres of the watcher's position at the time of the post.
    case radius(Double)
    /// Pictures posted to one event.
    case event(Int64)
}

/// Pictures and their ops. Loop thread only.
public final class Pictures {
    let store: (any PictureStore)?
    private let work: LoopWork
    let clock: any Clock
    private let sessions: Sessions
    /// Asks whether a poster is paused (ghost mode), which refuses a post that would place them.
    private let social: Social
    private let liveMap: LiveMap
    private let configuration: HubConfiguration
    /// Asks whether a caller is an admin (the moderation ops).
    let administration: Administration?
    package var events: (any HubEvents)?
    /// Signs the images' URLs; without one a picture carries no `url`.
    public var mediaSigner: (any MediaSigner)?
    /// The settings in force (options at start; replaced live with `apply(_:)`).
    public private(set) var settings: PictureSettings
    private(set) var watchers: [ConnectionID: (user: Int64, watch: PictureWatch)] = [:]
    /// Several nodes: posts made here, for the other nodes' watchers (nil: a single node), and the posts made
    /// elsewhere that were pushed here already.
    package var remote: (any RemotePictures)?
    var announcedElsewhere = RecentSet<Int64>()

    package init(
        store: (any PictureStore)?, work: LoopWork, clock: any Clock, sessions: Sessions, social: Social,
        liveMap: LiveMap, administration: Administration?, configuration: HubConfiguration
    ) {
        self.social = social
        self.store = store
        self.administration = administration
        self.work = work
        self.clock = clock
        self.sessions = sessions
        self.liveMap = liveMap
        self.configuration = configuration
        self.settings = configuration.pictureSettings
    }

    /// Registers the live settings `report_threshold`, `max_nearby_radius`, `guests_may_post` and
    /// `posts_per_hour` (the configured values are their defaults): an admin's change reaches `settings` at once.
    package func register(in registry: AdminSettings) {
        let start = configuration.pictureSettings
        registry.registerInteger(
            "report_threshold", range: 1...1_000, default: Int64(start.reportThreshold),
            help: "Distinct non-guest reporters that hide a picture from everyone."
        ) { [unowned self] value in self.settings.reportThreshold = Int(value) }
        registry.registerInteger(
            "max_nearby_radius", range: 10...100_000, default: Int64(start.maxNearbyRadius.rounded()),
            help: "Largest radius in metres picture.nearby and pictures.watch accept."
        ) { [unowned self] value in self.settings.maxNearbyRadius = Double(value) }
        registry.registerBoolean(
            "guests_may_post", default: start.guestsMayPost,
            help: "Whether guest accounts may post pictures and create events."
        ) { [unowned self] value in self.settings.guestsMayPost = value }
        registry.registerInteger(
            "posts_per_hour", range: 1...100_000, default: Int64(start.postsPerHour),
            help: "Pictures one user may post per hour."
        ) { [unowned self] value in self.settings.postsPerHour = Int(value) }
    }

    /// Replaces the settings in force without the registry (tests; admins go through `admin.settings.set`, which
    /// also stores and audits); refuses invalid ones with `bad_request` and keeps the old ones.
    public func apply(_ new: PictureSettings) throws(DomainError) {
        if let problem = new.problem { throw .badRequest(problem) }
        settings = new
    }

    /// Connections watching for new pictures.
    public var watcherCount: Int { watchers.count }

    static let unavailable = DomainError(.internal, "pictures are not available on this hub")

    /// Runs a store call off the loop, mapping the store's refusals to the domain's.
    func storeRun<T: Sendable>(
        _ body: @escaping @Sendable (any PictureStore) async throws(DomainError) -> T, then: @escaping Outcome<T>
    ) {
        guard let store else { return then(.failure(Self.unavailable)) }
        work.run({ () async throws(DomainError) -> T in try await body(store) }, then: then)
    }

    static func call<T>(_ body: () async throws -> T) async throws(DomainError) -> T {
        do { return try await body() } catch let error as PictureStoreError {
            switch error {
            case .mediaNotFound:
                throw DomainError(.notFound, "field 'media' names no upload of yours (POST /v1/media first)")
            case .notAnImage(let type):
                throw .badRequest("field 'media' must be a JPEG, PNG or WebP image, not \(type)")
            case .rateLimited(let limit):
                throw DomainError(.rateLimited, "you may post at most \(limit) pictures per hour")
            case .notMember:
                throw DomainError(.forbidden, "this event is private: join it (event.join) before posting to it")
            case .tagTaken:
                throw DomainError(.badRequest, "field 'tag': that event exists already")
            case .underReview:
                throw DomainError(
                    .forbidden, "reported and under review: it stays until an admin restores or removes it")
            }
        } catch {
            return try await LoopWork.storage { throw error }
        }
    }

    // MARK: Posting

    /// Posts an uploaded image of the caller's: nearby (at the caller's last position) or to the event `tag`.
    ///
    /// A picture's place is where its poster stood, so it is attached only by an explicit act: a nearby post is one,
    /// an event post only with `place: true`. Either is refused while the poster is paused, as a relic is: a placed
    /// picture would show where they are to everyone, whatever their sharing rules say.
    public func post(
        _ caller: Caller, media: String, caption rawCaption: String?, event rawTag: String?, place: Bool = false,
        _ done: @escaping Outcome<PictureView>
    ) {
        let user = caller.user
        if user.isGuest && !settings.guestsMayPost {
            return done(.failure(DomainError(.forbidden, "guests may not post pictures; register an account")))
        }
        guard MediaLinks.isMediaID(media) else {
            return done(.failure(.badRequest("field 'media' must be a media id returned by POST /v1/media")))
        }
        var caption = rawCaption?.trimmingWhitespace()
        if caption?.isEmpty == true { caption = nil }
        if let caption {
            guard caption.utf8.count <= configuration.pictureCaptionBytes else {
                return done(
                    .failure(
                        DomainError(
                            .tooLarge,
                            "field 'caption' must be at most \(configuration.pictureCaptionBytes) bytes (UTF-8)")))
            }
            guard !caption.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\n" })
            else { return done(.failure(.badRequest("field 'caption' must not contain control characters"))) }
        }
        var tag: String?
        if let rawTag {
            do { tag = try EventTag.canonical(rawTag, field: "event") } catch { return done(.failure(error)) }
        }
        let now = clock.now()
        var point: GeoPoint?
        if tag == nil || place {
            let what = tag == nil ? "a picture nearby" : "a placed picture"
            let toDo = tag == nil ? "to post one" : "to post one, or post without 'place'"
            if let refusal = social.refusalWhilePaused(user.id, now: now, what: what, toDo: toDo) {
                return done(.failure(refusal))
            }
            point = liveMap.point(of: user.id)
            guard point != nil else {
                return done(.failure(.badRequest("no position yet: report one with 'pos' before posting \(what)")))
            }
        }
        let new = NewPicture(
            by: user.id, mediaID: media, caption: caption, eventTag: tag, point: point, createdAt: now,
            postsPerHour: settings.postsPerHour)
        storeRun(
            { store async throws(DomainError) -> PostedPicture in
                try await Self.call { try await store.postPicture(new) }
            },
            then: { result in
                switch result {
                case .failure(let error): done(.failure(error))
                case .success(let posted):
                    self.announce(posted)
                    self.remote?.picturePosted(posted.record.id)
                    done(.success(self.view(posted.record, from: point, now: now)))
                }
            })
    }

    /// Pushes `picture.new` to every watcher who may see the picture.
    func announce(_ posted: PostedPicture) {
        guard let events, !watchers.isEmpty else { return }
        let record = posted.record
        let now = clock.now()
        for (connection, watcher) in watchers {
            if let members = posted.members, !members.contains(watcher.user) { continue }
            var distance: Double?
            switch watcher.watch {
            case .event(let event):
                guard record.event?.id == event else { continue }
                if let here = liveMap.point(of: watcher.user), let there = record.point {
                    distance = here.distance(to: there)
                }
            case .radius(let radius):
                guard let there = record.point, let here = liveMap.point(of: watcher.user) else { continue }
                let apart = here.distance(to: there)
                guard apart <= radius else { continue }
                distance = apart
            }
            var shown = view(record, from: nil, now: now)
            shown.record.liked = false
            shown.distance = distance
            events.publish(.pictureNew(shown), toConnections: [connection])
        }
    }

    /// A record with its signed URLs and its distance from `here`.
    func view(_ record: PictureRecord, from here: GeoPoint?, now: Int64) -> PictureView {
        let url = mediaSigner?.url(for: record.mediaID, now: now)
        var distance: Double?
        if let here, let there = record.point { distance = here.distance(to: there) }
        return PictureView(
            record: record, url: url, downloadURL: url.map { $0 + "&download=1" }, distance: distance)
    }

    // MARK: One picture

    /// The picture as `access` lets its viewer reach it: `not_found` when hidden, reported by the viewer or gone,
    /// `forbidden` when it belongs to a private event the viewer has not joined.
    static func reachable(_ access: PictureAccess?, _ id: Int64, reporting: Bool = false) throws(DomainError)
        -> PictureRecord
    {
        guard let access, !access.record.hidden, reporting || !access.reportedByViewer else {
            throw DomainError(.notFound, "no picture \(id)")
        }
        guard access.member else {
            throw DomainError(.forbidden, "picture \(id) belongs to a private event: join it (event.join) first")
        }
        return access.record
    }

    /// One picture.
    public func get(_ caller: Caller, picture id: Int64, _ done: @escaping Outcome<PictureView>) {
        let viewer = caller.user.id
        let here = liveMap.point(of: viewer)
        let now = clock.now()
        storeRun(
            { store async throws(DomainError) -> PictureRecord in
                try Self.reachable(try await Self.call { try await store.picture(id: id, viewer: viewer) }, id)
            }, then: { result in done(result.map { self.view($0, from: here, now: now) }) })
    }

    /// Likes (`liked`) or unlikes a picture; idempotent. Answers its likes.
    public func like(_ caller: Caller, picture id: Int64, liked: Bool, _ done: @escaping Outcome<Int64>) {
        let viewer = caller.user.id
        let now = clock.now()
        storeRun(
            { store async throws(DomainError) -> Int64 in
                _ = try Self.reachable(try await Self.call { try await store.picture(id: id, viewer: viewer) }, id)
                return try await Self.call { try await store.setLike(picture: id, user: viewer, liked: liked, at: now) }
            }, then: done)
    }

    /// Deletes one of the caller's pictures.
    public func delete(_ caller: Caller, picture id: Int64, _ done: @escaping Outcome<Int64>) {
        let viewer = caller.user.id
        storeRun(
            { store async throws(DomainError) -> Int64 in
                guard let access = try await Self.call({ try await store.picture(id: id, viewer: viewer) }) else {
                    throw DomainError(.notFound, "no picture \(id)")
                }
                guard access.record.by.id == viewer else {
                    if !access.member { throw DomainError(.notFound, "no picture \(id)") }
                    throw DomainError(.notOwner, "picture \(id) is not yours: only its poster may delete it")
                }
                guard try await Self.call({ try await store.deletePicture(id: id) }) else {
                    throw DomainError(.notFound, "no picture \(id)")
                }
                return id
            }, then: done)
    }

    /// Reports a picture: hidden from the caller at once, and from everyone once `reportThreshold` distinct
    /// non-guest users reported it. Answers whether it is now hidden from everyone.
    public func report(
        _ caller: Caller, picture id: Int64, reason rawReason: String, text rawText: String?,
        _ done: @escaping Outcome<Bool>
    ) {
        guard let reason = ReportReason(rawValue: rawReason) else {
            let list = ReportReason.allCases.map(\.rawValue).joined(separator: ", ")
            return done(.failure(.badRequest("field 'reason' must be one of \(list)")))
        }
        var text = rawText?.trimmingWhitespace()
        if text?.isEmpty == true { text = nil }
        if reason == .other && text == nil {
            return done(.failure(.badRequest("field 'text' must say what is wrong when 'reason' is 'other'")))
        }
        if let text, text.utf8.count > configuration.pictureCaptionBytes {
            return done(
                .failure(.badRequest("field 'text' must be at most \(configuration.pictureCaptionBytes) bytes")))
        }
        let reporter = caller.user
        let report = NewReport(
            picture: id, reporter: reporter, reason: reason, text: text, at: clock.now(),
            threshold: settings.reportThreshold)
        storeRun(
            { store async throws(DomainError) -> Bool in
                let record = try Self.reachable(
                    try await Self.call { try await store.picture(id: id, viewer: reporter.id) }, id, reporting: true)
                guard record.by.id != reporter.id else {
                    throw DomainError(.forbidden, "you cannot report your own picture; delete it instead")
                }
                return try await Self.call { try await store.report(report) }
            }, then: done)
    }

    // MARK: Browsing

    /// Reads `sort` and `cursor` into an order and the key to start after.
    private func order(sort: String?, cursor: String?, here: GeoPoint?) throws(DomainError) -> (
        PictureOrder, PictureKey?
    ) {
        var chosen = PictureSort.date
        if let sort {
            guard let known = PictureSort(rawValue: sort) else {
                throw .badRequest("field 'sort' must be likes, date or distance")
            }
            chosen = known
        }
        guard let cursor else { return (PictureOrder(sort: chosen, origin: here), nil) }
        guard let parsed = PictureCursor(text: cursor), parsed.sort == chosen else {
            throw .badRequest("field 'cursor' is not a cursor of this listing and sort")
        }
        return (PictureOrder(sort: chosen, origin: parsed.origin), parsed.after)
    }

    /// A page of the pictures within `radius` metres of the caller's last position.
    public func nearby(
        _ caller: Caller, radius: Double, sort: String?, cursor: String?, _ done: @escaping Outcome<PicturePage>
    ) {
        guard radius > 0, radius <= settings.maxNearbyRadius else {
            return done(
                .failure(.badRequest("field 'radius' must be above 0 and at most \(Int(settings.maxNearbyRadius)) m")))
        }
        let here = liveMap.point(of: caller.user.id)
        guard cursor != nil || here != nil else {
            return done(.failure(.badRequest("no position yet: report one with 'pos' before browsing nearby")))
        }
        let order: PictureOrder
        let after: PictureKey?
        do { (order, after) = try self.order(sort: sort, cursor: cursor, here: here) } catch {
            return done(.failure(error))
        }
        guard order.origin != nil else {
            return done(.failure(.badRequest("field 'cursor' is not a cursor of picture.nearby")))
        }
        page(
            PictureQuery(
                viewer: caller.user.id, scope: .nearby(radius: radius), order: order, after: after,
                limit: configuration.picturePageSize), here: here, done)
    }

    /// A page of an event's pictures (`forbidden` for a private event the caller has not joined).
    public func eventPictures(
        _ caller: Caller, tag rawTag: String, sort: String?, cursor: String?, _ done: @escaping Outcome<PicturePage>
    ) {
        let tag: String
        let order: PictureOrder
        let after: PictureKey?
        let here = liveMap.point(of: caller.user.id)
        do {
            tag = try EventTag.canonical(rawTag)
            (order, after) = try self.order(sort: sort, cursor: cursor, here: here)
        } catch { return done(.failure(error)) }
        let viewer = caller.user.id
        let size = configuration.picturePageSize
        storeRun(
            { store async throws(DomainError) -> Int64 in
                let event = try await PictureEvents.member(store, tag: tag, viewer: viewer)
                return event.id
            },
            then: { result in
                switch result {
                case .failure(let error): done(.failure(error))
                case .success(let event):
                    self.page(
                        PictureQuery(viewer: viewer, scope: .event(event), order: order, after: after, limit: size),
                        here: here, done)
                }
            })
    }

    private func page(_ query: PictureQuery, here: GeoPoint?, _ done: @escaping Outcome<PicturePage>) {
        let now = clock.now()
        storeRun(
            { store async throws(DomainError) in
                var query = query
                query.limit += 1
                let found = try await Self.call { try await store.pictures(query) }
                return found.map { ($0.record, $0.key) }
            },
            then: { (result: Result<[(PictureRecord, PictureKey)], DomainError>) in
                switch result {
                case .failure(let error): done(.failure(error))
                case .success(var rows):
                    let more = rows.count > query.limit
                    if more { rows.removeLast(rows.count - query.limit) }
                    let next =
                        more
                        ? rows.last.map {
                            PictureCursor(sort: query.order.sort, after: $0.1, origin: query.order.origin).text
                        } : nil
                    let pictures = rows.map { self.view($0.0, from: query.order.origin ?? here, now: now) }
                    done(.success(PicturePage(pictures: pictures, cursor: next)))
                }
            })
    }

    /// The newest pictures the caller sees whose caption holds every word of `q`; `#tag` words match the event's
    /// tag or a hashtag in the caption.
    public func search(_ caller: Caller, query q: String, _ done: @escaping Outcome<[PictureView]>) {
        let text = q.trimmingWhitespace()
        guard !text.isEmpty, text.utf8.count <= 200 else {
            return done(.failure(.badRequest("field 'q' must be 1–200 bytes")))
        }
        var words: [String] = []
        var tags: [String] = []
        for part in text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }) {
            if part.hasPrefix("#") {
                do { tags.append(try EventTag.canonical(String(part), field: "q")) } catch {
                    return done(.failure(error))
                }
            } else {
                words.append(part.lowercased())
            }
        }
        let viewer = caller.user.id
        let here = liveMap.point(of: viewer)
        let now = clock.now()
        let limit = configuration.picturePageSize
        let (allWords, allTags) = (words, tags)
        storeRun(
            { store async throws(DomainError) -> [PictureRecord] in
                try await Self.call {
                    try await store.searchPictures(words: allWords, tags: allTags, viewer: viewer, limit: limit)
                }
            }, then: { result in done(result.map { $0.map { self.view($0, from: here, now: now) } }) })
    }

    // MARK: Watching

    /// Starts (or replaces) the connection's watch: an area around the caller, or an event it may see.
    public func watch(
        _ caller: Caller, radius: Double?, event rawTag: String?, _ done: @escaping Outcome<PictureWatch>
    ) {
        let connection = caller.connection
        let user = caller.user.id
        switch (radius, rawTag) {
        case (let radius?, nil):
            guard radius > 0, radius <= settings.maxNearbyRadius else {
                return done(
                    .failure(
                        .badRequest("field 'radius' must be above 0 and at most \(Int(settings.maxNearbyRadius)) m")))
            }
            watchers[connection] = (user, .radius(radius))
            done(.success(.radius(radius)))
        case (nil, let rawTag?):
            let tag: String
            do { tag = try EventTag.canonical(rawTag, field: "event") } catch { return done(.failure(error)) }
            storeRun(
                { store async throws(DomainError) -> Int64 in
                    try await PictureEvents.member(store, tag: tag, viewer: user).id
                },
                then: { result in
                    switch result {
                    case .failure(let error): done(.failure(error))
                    case .success(let event):
                        guard self.sessions.user(of: connection)?.id == user else {
                            return done(.failure(DomainError(.unauthorized, "the session ended")))
                        }
                        self.watchers[connection] = (user, .event(event))
                        done(.success(.event(event)))
                    }
                })
        default:
            done(.failure(.badRequest("give exactly one of the fields 'radius' and 'event'")))
        }
    }

    /// Stops the connection's watch (a no-op when it watches nothing).
    public func unwatch(_ caller: Caller) { stopWatching(caller.connection) }

    /// Forgets a connection's watch (it closed or its session ended).
    package func stopWatching(_ connection: ConnectionID) { watchers[connection] = nil }

    /// Forgets watches of a private event that is gone.
    func eventGone(_ event: Int64) {
        watchers = watchers.filter { $0.value.watch != .event(event) }
    }

    /// Forgets the watches of an event made private (`admin.event.update`) held by users who are not its members.
    func eventPrivate(_ event: Int64, members: Set<Int64>) {
        watchers = watchers.filter { $0.value.watch != .event(event) || members.contains($0.value.user) }
    }
}
