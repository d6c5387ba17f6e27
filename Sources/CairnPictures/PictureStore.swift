// What pictures and events need from durable storage. Every acknowledged write (a post, a like, a report, a
// membership, a deletion) is committed before the call returns. The store answers for one viewer: it reads what
// decides visibility (hidden by reports, private events joined, pictures the viewer reported) and orders pages
// with `PictureOrder`, so every store pages the same way.
public import CairnAdmin
public import CairnCore
public import CairnGeo

/// Why the store refused a picture or event write.
public enum PictureStoreError: Error, Equatable, Sendable {
    /// The media id names no upload of the poster.
    case mediaNotFound
    /// The media is not a JPEG, PNG or WebP image.
    case notAnImage(contentType: String)
    /// The poster already posted `limit` pictures in the last hour.
    case rateLimited(limit: Int)
    /// The event is private and the poster has not joined it.
    case notMember
    /// The hashtag is taken by another event.
    case tagTaken
    /// The picture (or a picture of the event) has open reports: it stays for the admins to restore or remove.
    case underReview
}

/// A picture to store.
public struct NewPicture: Sendable, Equatable {
    /// The poster.
    public var by: Int64
    /// The uploaded image (an upload of the poster's).
    public var mediaID: String
    /// The caption, if any.
    public var caption: String?
    /// The event's canonical tag, when posted to an event (a missing event is created, public, by the poster).
    public var eventTag: String?
    /// The poster's last position, if known.
    public var point: GeoPoint?
    /// When (ms).
    public var createdAt: Int64
    /// Most pictures one user may post per hour.
    public var postsPerHour: Int

    /// Creates the value.
    public init(
        by: Int64, mediaID: String, caption: String?, eventTag: String?, point: GeoPoint?, createdAt: Int64,
        postsPerHour: Int
    ) {
        self.by = by
        self.mediaID = mediaID
        self.caption = caption
        self.eventTag = eventTag
        self.point = point
        self.createdAt = createdAt
        self.postsPerHour = postsPerHour
    }
}

/// A stored picture and who may see it live: for a private event's picture, the members.
public struct PostedPicture: Sendable, Equatable {
    /// The picture as its poster sees it.
    public var record: PictureRecord
    /// The members of its private event (nil for a public picture).
    public var members: Set<Int64>?

    /// Creates the value.
    public init(record: PictureRecord, members: Set<Int64>?) {
        self.record = record
        self.members = members
    }
}

/// One picture as one viewer may reach it.
public struct PictureAccess: Sendable, Equatable {
    /// The picture.
    public var record: PictureRecord
    /// True when the viewer reported it.
    public var reportedByViewer: Bool
    /// True when the viewer may see its event's pictures (always true outside private events).
    public var member: Bool

    /// Creates the value.
    public init(record: PictureRecord, reportedByViewer: Bool, member: Bool) {
        self.record = record
        self.reportedByViewer = reportedByViewer
        self.member = member
    }
}

/// Which pictures a page is drawn from.
public enum PictureScope: Sendable, Equatable {
    /// Pictures within `radius` metres of the order's origin.
    case nearby(radius: Double)
    /// The pictures of one event.
    case event(Int64)
}

/// A page request, already checked by the feature.
public struct PictureQuery: Sendable, Equatable {
    /// Who looks.
    public var viewer: Int64
    /// Where the pictures come from.
    public var scope: PictureScope
    /// The sort and the point distances are measured from.
    public var order: PictureOrder
    /// Only keys strictly after this one.
    public var after: PictureKey?
    /// At most this many.
    public var limit: Int

    /// Creates the value.
    public init(viewer: Int64, scope: PictureScope, order: PictureOrder, after: PictureKey?, limit: Int) {
        self.viewer = viewer
        self.scope = scope
        self.order = order
        self.after = after
        self.limit = limit
    }

    public static func == (a: PictureQuery, b: PictureQuery) -> Bool {
        a.viewer == b.viewer && a.scope == b.scope && a.order.sort == b.order.sort && a.order.origin == b.order.origin
            && a.after == b.after && a.limit == b.limit
    }
}

/// A report to store.
public struct NewReport: Sendable, Equatable {
    /// The picture.
    public var picture: Int64
    /// Who reports.
    public var reporter: User
    /// Why.
    public var reason: ReportReason
    /// The reporter's words (required for `other`).
    public var text: String?
    /// When (ms).
    public var at: Int64
    /// How many distinct non-guest reporters hide a picture from everyone.
    public var threshold: Int

    /// Creates the value.
    public init(picture: Int64, reporter: User, reason: ReportReason, text: String?, at: Int64, threshold: Int) {
        self.picture = picture
        self.reporter = reporter
        self.reason = reason
        self.text = text
        self.at = at
        self.threshold = threshold
    }
}

/// An event to store.
public struct NewEvent: Sendable, Equatable {
    /// Its canonical tag.
    public var tag: String
    /// Its title.
    public var title: String?
    /// Its creator (its first member).
    public var owner: Int64
    /// The scrypt hash of its password (nil: public).
    public var passwordHash: String?
    /// When (ms).
    public var createdAt: Int64

    /// Creates the value.
    public init(tag: String, title: String?, owner: Int64, passwordHash: String?, createdAt: Int64) {
        self.tag = tag
        self.title = title
        self.owner = owner
        self.passwordHash = passwordHash
        self.createdAt = createdAt
    }
}

/// Durable storage of pictures and events.
public protocol PictureStore: Sendable {
    /// Stores a picture (creating a missing event, public, owned by the poster); throws `PictureStoreError`.
    func postPicture(_ picture: NewPicture) async throws -> PostedPicture
    /// One picture as `viewer` may reach it; nil when there is no such picture.
    func picture(id: Int64, viewer: Int64) async throws -> PictureAccess?
    /// A picture as its post announced it (the record as its poster sees it and, for a private event, the event's
    /// members now), for announcing a post made through another node; nil when there is no such picture.
    func postedPicture(id: Int64) async throws -> PostedPicture?
    /// Records that `user` likes (or no longer likes) a picture, at `at` (ms); answers the picture's likes.
    /// Idempotent.
    func setLike(picture: Int64, user: Int64, liked: Bool, at: Int64) async throws -> Int64
    /// Deletes a picture with its likes and reports; false when it did not exist.
    /// Throws `underReview` while the picture has open reports (nothing deleted).
    func deletePicture(id: Int64) async throws -> Bool
    /// Stores a report (a second one by the same reporter changes nothing); hides the picture from everyone once
    /// `threshold` distinct non-guest reporters have open reports on it. Answers true when it is hidden now.
    func report(_ report: NewReport) async throws -> Bool
    /// A page of pictures for `query`, in order, with each one's key.
    func pictures(_ query: PictureQuery) async throws -> [(record: PictureRecord, key: PictureKey)]
    /// The newest pictures `viewer` sees whose caption holds every word and which carry every tag (their event's
    /// or in the caption), at most `limit`.
    func searchPictures(words: [String], tags: [String], viewer: Int64, limit: Int) async throws -> [PictureRecord]
    /// Stores an event; its owner becomes a member. Throws `PictureStoreError.tagTaken`.
    func createEvent(_ event: NewEvent) async throws -> EventInfo
    /// An event by canonical tag as `viewer` sees it, with its password hash; nil when there is none.
    func event(tag: String, viewer: Int64) async throws -> (info: EventInfo, passwordHash: String?)?
    /// Records that `user` joined the event.
    func join(event: Int64, user: Int64, at: Int64) async throws
    /// Events whose tag or title contains `text` (lower case), tags in order, at most `limit`.
    func searchEvents(text: String, viewer: Int64, limit: Int) async throws -> [EventInfo]
    /// Deletes an event with its pictures and memberships.
    /// Throws `underReview` while a picture of the event has open reports (nothing deleted).
    func deleteEvent(id: Int64) async throws
    /// Pictures with open reports (`open`) or with resolved ones, oldest report first, at most `limit`, each with
    /// its reports (as an admin sees the picture).
    func reportedPictures(open: Bool, limit: Int) async throws -> [(record: PictureRecord, reports: [PictureReport])]
    /// Resolves every open report of a picture and restores it (visible again) or removes it (hidden from everyone
    /// for good, its image no longer kept), appending `audit`, in one transaction. False when there is no such
    /// picture.
    func resolveReports(picture: Int64, remove: Bool, audit: AuditEntry) async throws -> Bool
    /// Changes an event's title and password, copies whether it is private into its pictures, makes everyone who
    /// posted to it a member when it becomes private, and appends `audit`, in one transaction. Answers the event as
    /// the audit's admin sees it, with its members when it is private; nil when there is no such event.
    func updateEvent(_ update: EventUpdate, audit: AuditEntry) async throws -> (info: EventInfo, members: Set<Int64>?)?
    /// Deletes an event with its pictures (their likes and reports, open ones included) and memberships, and appends
    /// `audit`, in one transaction. False when there is no such event.
    func deleteEventAsAdmin(id: Int64, audit: AuditEntry) async throws -> Bool
}
