// Pictures and events as values (seed 004, PicShare): an event (a hashtag, public or behind a password), the fixed
// list of report reasons and the three sort orders (a picture as stored and as one viewer may see it, which the
// hub's events carry, is in the core: `PictureRecord`, `PictureView`). The feature (`Pictures`, `PictureEvents`)
// decides who may see what; these types only carry it.
public import CairnCore
import CairnGeo

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
