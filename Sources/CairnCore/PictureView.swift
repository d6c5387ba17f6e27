// A picture as stored and as one viewer sees it: it lives in the core because the hub's events carry it
// (`HubEvent.pictureNew`); the pictures feature (`Pictures`, `PictureEvents`) decides who may see what.
public import CairnGeo

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

    /// Creates the value.
    package init(record: PictureRecord, url: String? = nil, downloadURL: String? = nil, distance: Double? = nil) {
        self.record = record
        self.url = url
        self.downloadURL = downloadURL
        self.distance = distance
    }
}
