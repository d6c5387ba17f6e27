// Pictures and events as values (seed 004, PicShare): a picture as stored and as one viewer may see it, an event
// (a hashtag, public or behind a password), the fixed list of report reasons and the three sort orders. The
// feature (`Pictures`, `PictureEvents`) decides who may see what; these types only carry it.
import CairnGeo

/// A picture as the store returns it to one viewer (what that viewer may know of it).
public struct PictureRecord: Sendable, Equatable {
    /// Its id.
    public var id: Int64
    /// Who posted it.
    public var by: User
    /// The caption, if any.
    public var caption: String?
    /// The event it was posted to, if any.
    public var event: EventRef?
    /// Where it was posted (the poster's last position then), if known.
    public var point: GeoPoint?
    /// How many users like it.
    public var likes: Int64
    /// True when the viewer likes it.
    public var liked: Bool
    /// When it was posted, ms since the epoch.
    public var createdAt: Int64
    /// The uploaded image it shows.
    public var mediaID: String
    /// True once hidden from everyone (reports reached the threshold).
    public var hidden: Bool

    /// Creates the value.
    public init(
        id: Int64, by: User, caption: String?, event: EventRef?, point: GeoPoint?, likes: Int64, liked: Bool,
        createdAt: Int64, mediaID: String, hidden: Bool
    ) {
        self.id = id
        self.by = by
        self.caption = caption
        self.event = event
        self.point = point
        self.likes = likes
        self.liked = liked
        self.createdAt = createdAt
        self.mediaID = mediaID
        self.hidden = hidden
    }
}

/// The event a picture belongs to, as far as a picture needs it.
public struct EventRef: Sendable, Equatable {
    /// The event's id.
    public var id: Int64
    /// Its hashtag (canonical, lower case, without `#`).
    public var tag: String
    /// True for a private event (behind a password).
    public var isPrivate: Bool

    /// Creates the value.
    public init(id: Int64, tag: String, isPrivate: Bool) {
        self.id = id
        self.tag = tag
        self.isPrivate = isPrivate
    }
}

/// A picture as one viewer sees it: the record, its signed URLs and the distance from the viewer.
public struct PictureView: Sendable, Equatable {
    /// The picture.
    public var record: PictureRecord
    /// A signed URL of the image, when a signer is set.
    public var url: String?
    /// The same URL asking the hub to serve the image as an attachment (saving it to the device).
    public var downloadURL: String?
    /// Metres from the viewer, when both places are known.
    public var distance: Double?
}

/// An event (a hashtag) as a viewer sees it.
public struct EventInfo: Sendable, Equatable {
    /// The event's id.
    public var id: Int64
    /// Its hashtag (canonical, lower case, without `#`).
    public var tag: String
    /// Its title, if any.
    public var title: String?
    /// Who created it.
    public var owner: User
    /// True when it has a password.
    public var isPrivate: Bool
    /// When it was created, ms since the epoch.
    public var createdAt: Int64
    /// True when the viewer may see its pictures (public, or joined).
    public var member: Bool
    /// How many pictures it holds (visible or not).
    public var pictures: Int64

    /// Creates the value.
    public init(
        id: Int64, tag: String, title: String?, owner: User, isPrivate: Bool, createdAt: Int64, member: Bool,
        pictures: Int64
    ) {
        self.id = id
        self.tag = tag
        self.title = title
        self.owner = owner
        self.isPrivate = isPrivate
        self.createdAt = createdAt
        self.member = member
        self.pictures = pictures
    }
}

/// Why a picture is reported: the fixed list of the contract.
public enum ReportReason: String, Sendable, CaseIterable {
    /// Advertising or junk.
    case spam
    /// Nudity.
    case nudity
    /// Violence.
    case violence
    /// Harassment of someone.
    case harassment
    /// Someone else's work.
    case copyright
    /// Shows someone or something private.
    case privacy
    /// Anything else; the report must then say what in `text`.
    case other
}

/// How a page of pictures is ordered. Ties are broken by id, newest (highest) first, so every order is total.
public enum PictureSort: String, Sendable, CaseIterable {
    /// Most liked first.
    case likes
    /// Newest first (the default).
    case date
    /// Nearest first; pictures without a place last.
    case distance
}
