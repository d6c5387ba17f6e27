// The values of the wire protocol (docs/PROTOCOL.md) as Swift types: users and sessions, friends' positions, sharing
// rules. Field names are spelled out (`latitude` for `lat`); each type maps them to the wire in its CodingKeys.
import Foundation

/// An account as the hub shows it: `{id, username, name}`.
public struct CairnUser: Sendable, Hashable, Codable {
    /// The user id.
    public var id: Int64
    /// The login name (`a-z`, `0-9`, `_`, `.`; guests have `guest-…`).
    public var username: String
    /// The display name.
    public var name: String

    /// Makes a user value.
    public init(id: Int64, username: String, name: String) {
        self.id = id
        self.username = username
        self.name = name
    }
}

/// A signed-in session: the user and the token that signs in again (keep it, e.g. in the Keychain).
public struct Session: Sendable, Hashable, Codable {
    /// The signed-in user.
    public var user: CairnUser
    /// The token: `authenticate(token:)` with it signs in again without the password.
    public var token: String

    /// Makes a session value.
    public init(user: CairnUser, token: String) {
        self.user = user
        self.token = token
    }
}

extension Session: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The user without the token, so that printing or logging a session (`print`, `dump`, string interpolation, the
    /// debugger) does not leak the credential.
    public var description: String { "Session(user: \(user), token: <redacted>)" }
    /// Same as ``description``: the token is left out.
    public var debugDescription: String { description }
    /// The user, and the token redacted.
    public var customMirror: Mirror { Mirror(self, children: ["user": user, "token": "<redacted>"]) }
}

/// A friend's position, from `friends.watch` and the `pos` event.
public struct FriendPosition: Sendable, Hashable, Codable {
    /// The friend's user id.
    public var user: Int64
    /// WGS84 latitude in degrees.
    public var latitude: Double
    /// WGS84 longitude in degrees.
    public var longitude: Double
    /// Accuracy radius in metres.
    public var accuracy: Double?
    /// Altitude in metres.
    public var altitude: Double?
    /// Speed in m/s.
    public var speed: Double?
    /// Heading in degrees [0, 360).
    public var heading: Double?
    /// Battery in percent.
    public var battery: Double?
    /// When it was taken, in ms since the Unix epoch.
    public var timestamp: Int64?
    /// The move from the previous fix was implausibly fast (the fix is shown, marked doubtful).
    public var flagged: Bool
    /// Older than the hub's `stale-after` (5 minutes by default): "last seen" rather than "here now".
    public var stale: Bool
    /// The centre of a ~2 km cell: the friend shares only an approximate position with you.
    public var approximate: Bool

    enum CodingKeys: String, CodingKey {
        case user, flagged, stale
        case latitude = "lat"
        case longitude = "lon"
        case accuracy = "acc"
        case altitude = "alt"
        case speed = "spd"
        case heading = "hdg"
        case battery = "bat"
        case timestamp = "ts"
        case approximate = "approx"
    }

    /// Makes a position value.
    public init(
        user: Int64, latitude: Double, longitude: Double, accuracy: Double? = nil, altitude: Double? = nil,
        speed: Double? = nil, heading: Double? = nil, battery: Double? = nil, timestamp: Int64? = nil,
        flagged: Bool = false, stale: Bool = false, approximate: Bool = false
    ) {
        self.user = user
        self.latitude = latitude
        self.longitude = longitude
        self.accuracy = accuracy
        self.altitude = altitude
        self.speed = speed
        self.heading = heading
        self.battery = battery
        self.timestamp = timestamp
        self.flagged = flagged
        self.stale = stale
        self.approximate = approximate
    }

    /// Decodes the wire form; absent flags are `false`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            user: try c.decode(Int64.self, forKey: .user), latitude: try c.decode(Double.self, forKey: .latitude),
            longitude: try c.decode(Double.self, forKey: .longitude),
            accuracy: try c.decodeIfPresent(Double.self, forKey: .accuracy),
            altitude: try c.decodeIfPresent(Double.self, forKey: .altitude),
            speed: try c.decodeIfPresent(Double.self, forKey: .speed),
            heading: try c.decodeIfPresent(Double.self, forKey: .heading),
            battery: try c.decodeIfPresent(Double.self, forKey: .battery),
            timestamp: try c.decodeIfPresent(Int64.self, forKey: .timestamp),
            flagged: try c.decodeIfPresent(Bool.self, forKey: .flagged) ?? false,
            stale: try c.decodeIfPresent(Bool.self, forKey: .stale) ?? false,
            approximate: try c.decodeIfPresent(Bool.self, forKey: .approximate) ?? false)
    }
}

/// A friend in `friend.list` and `friend.accept`: a user and whether you may know them online.
public struct Friend: Sendable, Hashable, Codable {
    /// The user id.
    public var id: Int64
    /// The login name.
    public var username: String
    /// The display name.
    public var name: String
    /// Online as far as you may know (false while they pause or hide from you).
    public var online: Bool
}

/// Friend requests waiting: those others sent you and those you sent.
public struct FriendRequests: Sendable, Hashable, Codable {
    /// Requests you may accept or decline.
    public var incoming: [CairnUser]
    /// Requests you sent that are not answered yet.
    public var outgoing: [CairnUser]
}

/// What `friend.request` and `friend.remove` answer.
public enum FriendStatus: String, Sendable, Hashable, Codable {
    /// The request waits for the other side.
    case pending
    /// You are friends (they had requested you too, or already were).
    case friends
    /// The friendship ended.
    case removed
    /// Your unanswered request was withdrawn.
    case withdrawn
}

/// How precisely a friend sees you (`share.set`).
public enum SharingLevel: String, Sendable, Hashable, Codable {
    /// Your position as reported (the default).
    case precise
    /// The centre of a fixed ~2 km cell, without accuracy, speed, heading or battery.
    case approximate
    /// Nothing; you appear offline to them.
    case hidden
}

/// One friend's rule in ``SharingSettings``.
public struct SharingRule: Sendable, Hashable, Codable {
    /// The friend's user id.
    public var user: Int64
    /// The level they get.
    public var level: SharingLevel
    /// When the rule runs out (ms since the epoch), if it is timed.
    public var until: Int64?
}

/// What you share now (`share.list`).
public struct SharingSettings: Sendable, Hashable, Codable {
    /// Ghost mode: every friend sees you hidden.
    public var paused: Bool
    /// When a timed pause ends (ms since the epoch).
    public var until: Int64?
    /// Every friend whose level is not precise.
    public var levels: [SharingRule]
}

/// The reply of a `share.set`.
public struct SharingChange: Sendable, Hashable, Codable {
    /// The level in force.
    public var level: SharingLevel
    /// When it reverts to precise (ms since the epoch), if timed.
    public var until: Int64?
}

/// A profile (`profile.set`, `user.get`).
public struct Profile: Sendable, Hashable, Codable {
    /// The user id.
    public var id: Int64
    /// The login name.
    public var username: String
    /// The display name.
    public var name: String
    /// The short bio.
    public var bio: String?
    /// A signed URL path of the photo (`/v1/media/…`), valid for a few minutes; see ``CairnClient/download(_:)``.
    public var photoURL: String?
    /// The hub's placeholder image path when there is no photo.
    public var placeholderURL: String?

    enum CodingKeys: String, CodingKey {
        case id, username, name, bio
        case photoURL = "photo_url"
        case placeholderURL = "placeholder_url"
    }
}

/// A chat message (`chat.send`, `chat.history`, the `chat.msg` event).
public struct ChatMessage: Sendable, Hashable, Codable {
    /// The message id; ids only grow and order a conversation.
    public var id: Int64
    /// The sender's user id.
    public var from: Int64
    /// The recipient's user id.
    public var to: Int64
    /// The text.
    public var text: String
    /// The hub's time of sending, in ms since the epoch.
    public var timestamp: Int64

    enum CodingKeys: String, CodingKey {
        case id, from, to, text
        case timestamp = "ts"
    }
}

/// A conversation in `chat.list`.
public struct Conversation: Sendable, Hashable, Codable {
    /// The other user's id.
    public var with: Int64
    /// The other user.
    public var user: CairnUser
    /// The newest message either way.
    public var last: ChatMessage
    /// How many of theirs you have not read.
    public var unread: Int
}

/// A page of `chat.history`: oldest first.
public struct ChatHistory: Sendable, Hashable, Codable {
    /// The messages, oldest first.
    public var messages: [ChatMessage]
    /// Whether older ones exist (ask again `before` the first id).
    public var more: Bool
}
