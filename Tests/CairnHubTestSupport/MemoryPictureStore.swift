// An in-memory stand-in for the pictures part of the store, with the same contracts as the SQLite one (media an
// image upload of the poster's, the hourly limit, events created when missing and public, members only for
// private ones, likes once per user, hiding at the report threshold of distinct non-guests) and the same paging
// (`PictureOrder`), so the hub's picture and event ops are tested without SQLite.
public import CairnAdmin
public import CairnCore
import CairnGeo
public import CairnPictures
public import Synchronization

public final class MemoryPictureStore: PictureStore {
    /// Creates an empty one.
    public init() {}

    public struct Stored: Sendable {
        public var by: User
        public var picture: NewPicture
        public var event: EventRef?
        public var likes: Set<Int64> = []
        public var reports: [Int64: Bool] = [:]
        public var hidden = false
        public var resolved = false
    }

    public struct Event: Sendable {
        public var id: Int64
        public var new: NewEvent
        public var owner: User
        public var members: Set<Int64>
    }

    public struct State: Sendable {
        public var users: [Int64: User] = [:]
        /// Uploads: media id and owner → content type.
        public var media: [String: String] = [:]
        public var pictures: [Int64: Stored] = [:]
        /// Every post (poster, time), deleted pictures' included: what the hourly limit counts.
        public var posts: [(user: Int64, at: Int64)] = []
        public var events: [String: Event] = [:]
        public var next: Int64 = 1
        public var audit: [AuditEntry] = []
    }
    public let state = Mutex(State())

    /// Makes `user` known (for the `by` of its pictures).
    public func add(_ user: User) { state.withLock { $0.users[user.id] = user } }

    /// Records an upload of `media` by `owner` as `type`.
    public func upload(_ media: String, owner: Int64, type: String = "image/jpeg") {
        state.withLock { $0.media["\(media)/\(owner)"] = type }
    }

    /// Pictures stored.
    public var count: Int { state.withLock { $0.pictures.count } }

    private static func record(_ id: Int64, _ s: Stored, viewer: Int64) -> PictureRecord {
        PictureRecord(
            id: id, by: s.by, caption: s.picture.caption, event: s.event, point: s.picture.point,
            likes: Int64(s.likes.count), liked: s.likes.contains(viewer), createdAt: s.picture.createdAt,
            mediaID: s.picture.mediaID, hidden: s.hidden)
    }

    public func postPicture(_ picture: NewPicture) async throws -> PostedPicture {
        try state.withLock { s in
            guard let type = s.media["\(picture.mediaID)/\(picture.by)"] else { throw PictureStoreError.mediaNotFound }
            guard type.hasPrefix("image/") else { throw PictureStoreError.notAnImage(contentType: type) }
            // Posts of the last hour, deleted pictures' included (as the SQLite store's `picture_posts`).
            let recent = s.posts.filter { $0.user == picture.by && $0.at > picture.createdAt - 3_600_000 }
            guard recent.count < picture.postsPerHour else {
                throw PictureStoreError.rateLimited(limit: picture.postsPerHour)
            }
            var event: EventRef?
            var members: Set<Int64>?
            if let tag = picture.eventTag {
                if s.events[tag] == nil {
                    s.events[tag] = Event(
                        id: s.next,
                        new: NewEvent(
                            tag: tag, title: nil, owner: picture.by, passwordHash: nil,
                            createdAt: picture.createdAt),
                        owner: s.users[picture.by]!, members: [picture.by])
                    s.next += 1
                }
                let found = s.events[tag]!
                let isPrivate = found.new.passwordHash != nil
                if isPrivate {
                    guard found.members.contains(picture.by) else { throw PictureStoreError.notMember }
                    members = found.members
                }
                event = EventRef(id: found.id, tag: tag, isPrivate: isPrivate)
            }
            let id = s.next
            s.next += 1
            let stored = Stored(by: s.users[picture.by]!, picture: picture, event: event)
            s.pictures[id] = stored
            s.posts.append((picture.by, picture.createdAt))
            return PostedPicture(record: Self.record(id, stored, viewer: picture.by), members: members)
        }
    }

    public func postedPicture(id: Int64) async throws -> PostedPicture? {
        state.withLock { s in
            guard let p = s.pictures[id] else { return nil }
            var members: Set<Int64>?
            if let event = p.event, event.isPrivate { members = s.events[event.tag]?.members ?? [] }
            return PostedPicture(record: Self.record(id, p, viewer: p.by.id), members: members)
        }
    }

    public func picture(id: Int64, viewer: Int64) async throws -> PictureAccess? {
        state.withLock { s in
            guard let p = s.pictures[id] else { return nil }
            var member = true
            if let event = p.event, event.isPrivate {
                member = s.events[event.tag]?.members.contains(viewer) ?? false
            }
            return PictureAccess(
                record: Self.record(id, p, viewer: viewer), reportedByViewer: p.reports[viewer] != nil, member: member)
        }
    }

    public func setLike(picture: Int64, user: Int64, liked: Bool, at: Int64) async throws -> Int64 {
        state.withLock { s in
            if liked { s.pictures[picture]?.likes.insert(user) } else { s.pictures[picture]?.likes.remove(user) }
            return Int64(s.pictures[picture]?.likes.count ?? 0)
        }
    }

    public func deletePicture(id: Int64) async throws -> Bool {
        try state.withLock { s in
            if let p = s.pictures[id], p.reports.values.contains(false), !p.resolved {
                throw PictureStoreError.underReview
            }
            return s.pictures.removeValue(forKey: id) != nil
        }
    }

    public func report(_ report: NewReport) async throws -> Bool {
        state.withLock { s in
            guard var p = s.pictures[report.picture] else { return false }
            if p.reports[report.reporter.id] == nil { p.reports[report.reporter.id] = report.reporter.isGuest }
            if p.reports.values.filter({ !$0 }).count >= report.threshold { p.hidden = true }
            s.pictures[report.picture] = p
            return p.hidden
        }
    }

    private func candidates(_ s: State, viewer: Int64) -> ([PictureCandidate], PictureViewer) {
        let joined = Set(s.events.values.filter { $0.new.passwordHash != nil && $0.members.contains(viewer) }.map(\.id))
        let reported = Set(s.pictures.filter { $0.value.reports[viewer] != nil }.map(\.key))
        let all = s.pictures.map { id, p in
            PictureCandidate(
                id: id, point: p.picture.point, likes: Int64(p.likes.count), createdAt: p.picture.createdAt,
                hidden: p.hidden, privateEvent: p.event?.isPrivate == true ? p.event?.id : nil)
        }
        return (all, PictureViewer(user: viewer, joined: joined, reported: reported))
    }

    public func pictures(_ query: PictureQuery) async throws -> [(record: PictureRecord, key: PictureKey)] {
        state.withLock { s in
            var (all, viewer) = candidates(s, viewer: query.viewer)
            var radius: Double?
            switch query.scope {
            case .nearby(let r): radius = r
            case .event(let event): all = all.filter { s.pictures[$0.id]?.event?.id == event }
            }
            return query.order.page(all, viewer: viewer, after: query.after, radius: radius, limit: query.limit).map {
                (Self.record($0.candidate.id, s.pictures[$0.candidate.id]!, viewer: query.viewer), $0.key)
            }
        }
    }

    public func searchPictures(words: [String], tags: [String], viewer: Int64, limit: Int) async throws
        -> [PictureRecord]
    {
        state.withLock { s in
            let (all, seer) = candidates(s, viewer: viewer)
            let order = PictureOrder(sort: .date, origin: nil)
            return order.page(all, viewer: seer, after: nil, radius: nil, limit: .max).compactMap { c in
                let p = s.pictures[c.candidate.id]!
                let caption = (p.picture.caption ?? "").lowercased()
                let captionTags = EventTag.hashtags(in: caption)
                guard words.allSatisfy({ caption.contains($0) }),
                    tags.allSatisfy({ $0 == p.event?.tag || captionTags.contains($0) })
                else { return nil }
                return Self.record(c.candidate.id, p, viewer: viewer)
            }.prefix(limit).map { $0 }
        }
    }

    private static func info(_ e: Event, viewer: Int64, pictures: Int) -> EventInfo {
        EventInfo(
            id: e.id, tag: e.new.tag, title: e.new.title, owner: e.owner, isPrivate: e.new.passwordHash != nil,
            createdAt: e.new.createdAt, member: e.new.passwordHash == nil || e.members.contains(viewer),
            pictures: Int64(pictures))
    }

    public func createEvent(_ event: NewEvent) async throws -> EventInfo {
        try state.withLock { s in
            guard s.events[event.tag] == nil else { throw PictureStoreError.tagTaken }
            let e = Event(id: s.next, new: event, owner: s.users[event.owner]!, members: [event.owner])
            s.next += 1
            s.events[event.tag] = e
            return Self.info(e, viewer: event.owner, pictures: 0)
        }
    }

    public func event(tag: String, viewer: Int64) async throws -> (info: EventInfo, passwordHash: String?)? {
        state.withLock { s in
            guard let e = s.events[tag] else { return nil }
            let count = s.pictures.values.filter { $0.event?.id == e.id }.count
            return (Self.info(e, viewer: viewer, pictures: count), e.new.passwordHash)
        }
    }

    public func join(event: Int64, user: Int64, at: Int64) async throws {
        state.withLock { s in
            if let tag = s.events.first(where: { $0.value.id == event })?.key { s.events[tag]?.members.insert(user) }
        }
    }

    public func searchEvents(text: String, viewer: Int64, limit: Int) async throws -> [EventInfo] {
        state.withLock { s in
            s.events.values.filter { $0.new.tag.contains(text) || ($0.new.title?.lowercased().contains(text) ?? false) }
                .sorted { $0.new.tag < $1.new.tag }.prefix(limit).map { Self.info($0, viewer: viewer, pictures: 0) }
        }
    }

    public func deleteEvent(id: Int64) async throws {
        try state.withLock { s in
            if s.pictures.values.contains(where: {
                $0.event?.id == id && $0.reports.values.contains(false) && !$0.resolved
            }) {
                throw PictureStoreError.underReview
            }
            s.pictures = s.pictures.filter { $0.value.event?.id != id }
            s.events = s.events.filter { $0.value.id != id }
        }
    }

    public func reportedPictures(open: Bool, limit: Int) async throws -> [(
        record: PictureRecord, reports: [PictureReport]
    )] {
        state.withLock { s in
            s.pictures.filter { $0.value.reports.values.contains { _ in true } && ($0.value.resolved != open) }
                .sorted { $0.key < $1.key }.prefix(limit).map { id, p in
                    let reports = p.reports.keys.sorted().map { user in
                        PictureReport(
                            reporter: s.users[user] ?? User(id: user, username: "?", name: "?", isGuest: false),
                            reason: "spam", text: nil, createdAt: p.picture.createdAt, resolved: p.resolved)
                    }
                    return (Self.record(id, p, viewer: 0), reports)
                }
        }
    }

    public func deleteEventAsAdmin(id: Int64, audit: AuditEntry) async throws -> Bool {
        state.withLock { s in
            guard s.events.values.contains(where: { $0.id == id }) else { return false }
            s.pictures = s.pictures.filter { $0.value.event?.id != id }
            s.events = s.events.filter { $0.value.id != id }
            s.audit.append(audit)
            return true
        }
    }

    public func resolveReports(picture: Int64, remove: Bool, audit: AuditEntry) async throws -> Bool {
        state.withLock { s in
            guard s.pictures[picture] != nil else { return false }
            s.pictures[picture]?.resolved = true
            s.pictures[picture]?.hidden = remove
            s.audit.append(audit)
            return true
        }
    }
    public func updateEvent(_ update: EventUpdate, audit: AuditEntry) async throws -> (
        info: EventInfo, members: Set<Int64>?
    )? {
        state.withLock { s in
            guard var e = s.events.values.first(where: { $0.id == update.event }) else { return nil }
            let wasPrivate = e.new.passwordHash != nil
            switch update.title {
            case .keep: break
            case .clear: e.new.title = nil
            case .set(let title): e.new.title = title
            }
            switch update.passwordHash {
            case .keep: break
            case .clear: e.new.passwordHash = nil
            case .set(let hash): e.new.passwordHash = hash
            }
            let isPrivate = e.new.passwordHash != nil
            for (id, p) in s.pictures where p.event?.id == e.id {
                if isPrivate && !wasPrivate { e.members.insert(p.by.id) }
                s.pictures[id]?.event?.isPrivate = isPrivate
            }
            s.events[e.new.tag] = e
            s.audit.append(audit)
            let count = s.pictures.values.filter { $0.event?.id == e.id }.count
            return (Self.info(e, viewer: audit.admin.id, pictures: count), isPrivate ? e.members : nil)
        }
    }
}
