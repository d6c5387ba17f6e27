// The values of relics, buckets, items, trackers, safe zones, places, pictures and events (docs/PROTOCOL.md), as
// Swift types with spelled-out names mapped to the wire in their CodingKeys.
import Foundation

/// A relic, or its marker (`relic.appear`, `relic.nearby`): a marker has no text, media or creator's name.
public struct Relic: Sendable, Hashable, Codable {
    /// The relic id.
    public var id: Int64
    /// Where it was left.
    public var latitude: Double
    /// Where it was left.
    public var longitude: Double
    /// Openable from within this many metres.
    public var radius: Double
    /// The creator's user id (absent when the creator hid when leaving it).
    public var creator: Int64?
    /// When it was left (ms since the epoch).
    public var created: Int64
    /// When it expires (ms since the epoch); absent for a permanent one.
    public var expires: Int64?
    /// Whether it needs a password.
    public var locked: Bool
    /// Metres from you, in `relic.nearby`.
    public var distance: Double?
    /// The text (opened relics only).
    public var text: String?
    /// The media id (opened relics only).
    public var media: String?
    /// A signed URL path of the media, valid for a few minutes; see ``CairnClient/download(_:)``.
    public var mediaURL: String?
    /// The creator (`relic.open`, unless withheld).
    public var creatorUser: CairnUser?
    /// `live` or `expired` (`relic.mine`).
    public var state: String?

    enum CodingKeys: String, CodingKey {
        case id, radius, creator, created, expires, locked, distance, text, media, state
        case latitude = "lat"
        case longitude = "lon"
        case mediaURL = "media_url"
        case creatorUser = "creator_user"
    }
}

/// What `relic.create` takes.
public struct NewRelic: Sendable, Hashable, Encodable {
    /// Up to 2,000 bytes; may be empty only with `media`.
    public var text: String
    /// 10 to 5,000 m.
    public var radius: Double
    /// Lifetime in seconds (60 s to a year); `nil` is permanent.
    public var ttl: Int?
    /// A password that locks it.
    public var password: String?
    /// A media id from ``CairnClient/upload(_:contentType:)``.
    public var media: String?
    /// A corrected place within 200 m of your last position.
    public var latitude: Double?
    /// A corrected place within 200 m of your last position.
    public var longitude: Double?

    enum CodingKeys: String, CodingKey {
        case text, radius, ttl, password, media
        case latitude = "lat"
        case longitude = "lon"
    }

    /// A relic to leave where you stand.
    public init(
        text: String, radius: Double, ttl: Int? = nil, password: String? = nil, media: String? = nil,
        latitude: Double? = nil, longitude: Double? = nil
    ) {
        self.text = text
        self.radius = radius
        self.ttl = ttl
        self.password = password
        self.media = media
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// A bucket: a shared collection of items.
public struct Bucket: Sendable, Hashable, Codable {
    /// The bucket id.
    public var id: Int64
    /// Its name.
    public var name: String
    /// `private` or `friends`.
    public var privacy: String
    /// Your role: `owner` or `viewer`.
    public var role: String
    /// The owners' user ids.
    public var owners: [Int64]
    /// The viewers' user ids (not those who view through friendship).
    public var viewers: [Int64]
    /// When it was made (ms since the epoch).
    public var created: Int64
}

/// An item of a bucket.
public struct Item: Sendable, Hashable, Codable {
    /// The item id.
    public var id: Int64
    /// Its bucket's id.
    public var bucket: Int64
    /// Its name.
    public var name: String
    /// A note.
    public var note: String?
    /// Ticked off.
    public var done: Bool
    /// Its position is for the bucket's owners only.
    public var hidden: Bool
    /// Left-behind alerts are on.
    public var alert: Bool
    /// A signed URL path of its photo.
    public var photoURL: String?
    /// The hub's placeholder image path when there is no photo.
    public var placeholderURL: String?
    /// The id of its paired tracker.
    public var tracker: Int64?
    /// When it was made (ms since the epoch).
    public var created: Int64

    enum CodingKeys: String, CodingKey {
        case id, bucket, name, note, done, hidden, alert, tracker, created
        case photoURL = "photo_url"
        case placeholderURL = "placeholder_url"
    }
}

/// A tracker: a device bound to one item.
public struct Tracker: Sendable, Hashable, Codable {
    /// The tracker id.
    public var id: Int64
    /// The device's own id (OsmAnd's and Traccar Client's `id`).
    public var device: String
    /// The item it reports for.
    public var item: Int64
    /// Whether its reports are accepted.
    public var active: Bool
    /// Whether its device is shown the bucket's other items (OwnTracks).
    public var showItems: Bool
    /// Who paired it.
    public var pairedBy: Int64?
    /// Whoever paired it is no longer an owner of the bucket.
    public var pairerLeft: Bool
    /// The secret key the device reports with, only in `tracker.pair`'s reply.
    public var key: String?
    /// When it was paired (ms since the epoch).
    public var created: Int64

    enum CodingKeys: String, CodingKey {
        case id, device, item, active, key, created
        case showItems = "show_items"
        case pairedBy = "paired_by"
        case pairerLeft = "pairer_left"
    }
}

/// An item's position (`items.watch`, the `item.pos` event) or a tracker's fix (`item.locate`).
public struct ItemPosition: Sendable, Hashable, Codable {
    /// The item id (absent in `item.locate`'s `position`).
    public var item: Int64?
    /// Latitude in degrees.
    public var latitude: Double
    /// Longitude in degrees.
    public var longitude: Double
    /// Accuracy in metres.
    public var accuracy: Double?
    /// Altitude in metres.
    public var altitude: Double?
    /// Speed in m/s.
    public var speed: Double?
    /// Heading in degrees.
    public var heading: Double?
    /// Battery in percent.
    public var battery: Double?
    /// When it was taken (ms since the epoch).
    public var timestamp: Int64

    enum CodingKeys: String, CodingKey {
        case item
        case latitude = "lat"
        case longitude = "lon"
        case accuracy = "acc"
        case altitude = "alt"
        case speed = "spd"
        case heading = "hdg"
        case battery = "bat"
        case timestamp = "ts"
    }
}

/// Where an item is and how to get there (`item.locate`).
public struct ItemLocation: Sendable, Hashable, Codable {
    /// The item id.
    public var item: Int64
    /// Its tracker's latest fix; `nil` when it never reported or is hidden from you.
    public var position: ItemPosition?
    /// Metres from your last position, when the hub knows it.
    public var distance: Double?
    /// Links to navigation apps, when there is a position.
    public var navigate: Navigation?

    /// Hand-offs to navigation apps.
    public struct Navigation: Sendable, Hashable, Codable {
        /// `walking` or `transit`.
        public var mode: String
        /// An RFC 5870 `geo:` URI.
        public var geo: String
        /// Apple Maps directions.
        public var apple: String
        /// Google Maps directions.
        public var google: String
    }
}

/// An `item.left_behind` alert.
public struct LeftBehind: Sendable, Hashable, Codable {
    /// The item id.
    public var item: Int64
    /// Metres between you and the item.
    public var distance: Double
    /// The item's latitude.
    public var latitude: Double
    /// The item's longitude.
    public var longitude: Double

    enum CodingKeys: String, CodingKey {
        case item, distance
        case latitude = "lat"
        case longitude = "lon"
    }
}

/// A safe zone: where your items never count as left behind.
public struct SafeZone: Sendable, Hashable, Codable {
    /// The zone id.
    public var id: Int64
    /// Its name.
    public var name: String
    /// Its centre's latitude.
    public var latitude: Double
    /// Its centre's longitude.
    public var longitude: Double
    /// Its radius in metres.
    public var radius: Double

    enum CodingKeys: String, CodingKey {
        case id, name, radius
        case latitude = "lat"
        case longitude = "lon"
    }
}

/// A place of interest (`places.nearest`, `places.search`, `place.get`).
public struct Place: Sendable, Hashable, Codable {
    /// The place id.
    public var id: Int64
    /// Its name.
    public var name: String
    /// Its category (`ski_area`, `peak`, …).
    public var category: String
    /// Latitude in degrees.
    public var latitude: Double
    /// Longitude in degrees.
    public var longitude: Double
    /// Metres from the point asked about (`places.nearest`).
    public var distance: Double?
    /// The source it was imported from (`place.get`).
    public var source: String?
    /// Its id in that source (`place.get`).
    public var external: String?
    /// Free attributes: elevation, url, … (`place.get`).
    public var attributes: [String: JSONValue]?

    enum CodingKeys: String, CodingKey {
        case name, category, distance, source, external, attributes
        case id = "place"
        case latitude = "lat"
        case longitude = "lon"
    }
}

/// An event: a hashtag pictures are posted to (named `TagEvent` to keep it apart from ``CairnEvent``).
public struct TagEvent: Sendable, Hashable, Codable {
    /// The event id.
    public var id: Int64
    /// The canonical tag, lower case, without `#`.
    public var tag: String
    /// Its title.
    public var title: String?
    /// Who made it.
    public var owner: CairnUser
    /// Whether a password guards joining.
    public var isPrivate: Bool
    /// When it was made (ms since the epoch).
    public var created: Int64
    /// Whether you may see its pictures.
    public var member: Bool
    /// How many pictures it holds.
    public var pictures: Int

    enum CodingKeys: String, CodingKey {
        case id, tag, title, owner, created, member, pictures
        case isPrivate = "private"
    }
}

/// A picture.
public struct Picture: Sendable, Hashable, Codable {
    /// The picture id.
    public var id: Int64
    /// Who posted it.
    public var by: CairnUser
    /// Its caption.
    public var caption: String?
    /// The event's tag, when posted to one.
    public var event: String?
    /// A private event's picture.
    public var isPrivate: Bool?
    /// Where it was posted, when known.
    public var latitude: Double?
    /// Where it was posted, when known.
    public var longitude: Double?
    /// Whole metres from you (or from a listing's origin).
    public var distance: Double?
    /// How many like it.
    public var likes: Int
    /// Whether you like it.
    public var liked: Bool
    /// When it was posted (ms since the epoch).
    public var created: Int64
    /// A signed URL path of the image.
    public var url: String
    /// The same, served as an attachment.
    public var downloadURL: String

    enum CodingKeys: String, CodingKey {
        case id, by, caption, event, distance, likes, liked, created, url
        case isPrivate = "private"
        case latitude = "lat"
        case longitude = "lon"
        case downloadURL = "download_url"
    }
}

/// A page of pictures; pass ``cursor`` back for the next.
public struct PicturePage: Sendable, Hashable, Codable {
    /// The pictures.
    public var pictures: [Picture]
    /// Present when there is more.
    public var cursor: String?
}
