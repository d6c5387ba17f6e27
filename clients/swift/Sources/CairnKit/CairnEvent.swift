// Every push event of the wire protocol as one enum, decoded from its line by its `ev` name, plus what the client
// itself has to tell (a watch answered again after a reconnect, a close, a session ended by the hub). An event the
// client does not know yet arrives as `.unknown` rather than being lost.
import Foundation

/// Something the hub pushed, or the client noticed, in ``CairnClient/events``.
public enum CairnEvent: Sendable, Equatable {
    /// A friend moved (`pos`), or a friend's position came into view (a new friendship, a reveal).
    case position(FriendPosition)
    /// A friend became hidden to you (`pos.hidden`): remove their marker.
    case positionHidden(user: Int64)
    /// A friend came online or went offline, as far as you may know (`presence`).
    case presence(user: Int64, online: Bool)
    /// Someone asked to be your friend (`friend.request`).
    case friendRequest(CairnUser)
    /// Your request was accepted (`friend.accepted`).
    case friendAccepted(CairnUser)
    /// A friendship ended (`friend.removed`).
    case friendRemoved(CairnUser)
    /// A chat message to you, or from another of your connections (`chat.msg`).
    case chatMessage(ChatMessage)
    /// Another of your connections marked messages read (`chat.read`).
    case chatRead(with: Int64, upto: Int64, unread: Int)
    /// You stand inside a relic's radius (`relic.appear`); the marker has no text.
    case relicAppeared(Relic)
    /// You left a relic's radius, or it was deleted (`relic.vanish`; `deleted` when its creator deleted it).
    case relicVanished(id: Int64, deleted: Bool)
    /// A relic announced to you expired (`relic.expired`).
    case relicExpired(id: Int64)
    /// A bucket you can view changed: read it again (`bucket.changed`).
    case bucketChanged(Int64)
    /// You can no longer view a bucket (`bucket.removed`).
    case bucketRemoved(Int64)
    /// An item's tracker reported (`item.pos`).
    case itemPosition(ItemPosition)
    /// You walked away from an item (`item.left_behind`).
    case itemLeftBehind(LeftBehind)
    /// You are back near an item (`item.reunited`).
    case itemReunited(Int64)
    /// A picture was posted where or to what you watch (`picture.new`).
    case pictureNew(Picture)
    /// The live figures of the stats channel (`stats`), as JSON.
    case stats(JSONValue)
    /// A request without an id failed, e.g. a `pos` out of range (`error`).
    case error(op: String?, CairnError)
    /// `friends.watch` was answered again after a reconnect: every friend's position as it is now.
    case friendPositions([FriendPosition])
    /// `items.watch` was answered again after a reconnect: every item's position as it is now.
    case itemPositions([ItemPosition])
    /// The connection closed; ``CloseInfo/willReconnect`` tells whether the client tries again.
    case closed(CloseInfo)
    /// The session ended without `logout`: the hub refused the token when signing in again, or revoked it (4500), or
    /// suspended the account (4503). The client forgot the token and the watches; sign in again.
    case signedOut(CairnError?)
    /// An event this version of the client does not know: its name and the whole object.
    case unknown(name: String, JSONValue)

    /// Decodes the event named `name` from its line; an event that does not decode is passed on as `.unknown`.
    init(name: String, line: Data) {
        let decoder = JSONDecoder()
        func decode<T: Decodable>(_ type: T.Type) -> T? { try? decoder.decode(T.self, from: line) }
        let object = decode(JSONValue.self) ?? .object([:])
        let decoded: CairnEvent?
        switch name {
        case "pos": decoded = decode(FriendPosition.self).map { .position($0) }
        case "pos.hidden": decoded = object["user"]?.int64Value.map { .positionHidden(user: $0) }
        case "presence":
            decoded = decode(Presence.self).map { .presence(user: $0.user, online: $0.online) }
        case "friend.request": decoded = decode(WithUser.self).map { .friendRequest($0.user) }
        case "friend.accepted": decoded = decode(WithUser.self).map { .friendAccepted($0.user) }
        case "friend.removed": decoded = decode(WithUser.self).map { .friendRemoved($0.user) }
        case "chat.msg": decoded = decode(WithMessage.self).map { .chatMessage($0.message) }
        case "chat.read":
            decoded = decode(ChatRead.self).map { .chatRead(with: $0.with, upto: $0.upto, unread: $0.unread) }
        case "relic.appear": decoded = decode(WithRelic.self).map { .relicAppeared($0.relic) }
        case "relic.vanish":
            decoded = object["id"]?.int64Value.map {
                .relicVanished(id: $0, deleted: object["reason"]?.stringValue == "deleted")
            }
        case "relic.expired": decoded = object["id"]?.int64Value.map { .relicExpired(id: $0) }
        case "bucket.changed": decoded = object["bucket"]?.int64Value.map { .bucketChanged($0) }
        case "bucket.removed": decoded = object["bucket"]?.int64Value.map { .bucketRemoved($0) }
        case "item.pos": decoded = decode(ItemPosition.self).map { .itemPosition($0) }
        case "item.left_behind": decoded = decode(LeftBehind.self).map { .itemLeftBehind($0) }
        case "item.reunited": decoded = object["item"]?.int64Value.map { .itemReunited($0) }
        case "picture.new": decoded = decode(WithPicture.self).map { .pictureNew($0.picture) }
        case "stats": decoded = .stats(object)
        case "error":
            let op = object["op"]?.stringValue
            decoded = .error(op: op, CairnError(wire: object["error"], op: op))
        default: decoded = nil
        }
        self = decoded ?? .unknown(name: name, object)
    }

    private struct Presence: Decodable {
        var user: Int64
        var online: Bool
    }

    private struct WithUser: Decodable {
        var user: CairnUser
    }

    private struct WithMessage: Decodable {
        var message: ChatMessage
    }

    private struct ChatRead: Decodable {
        var with: Int64
        var upto: Int64
        var unread: Int
    }

    private struct WithRelic: Decodable {
        var relic: Relic
    }

    private struct WithPicture: Decodable {
        var picture: Picture
    }
}
