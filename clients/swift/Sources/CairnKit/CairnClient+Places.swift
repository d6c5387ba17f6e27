// Places and pictures (docs/PROTOCOL.md, "Places", "Pictures and events"): nearest places and search, events
// (hashtags), posting, browsing, liking and reporting pictures, and the live `pictures.watch`.
import Foundation

extension CairnClient {
    private struct PlacesReply: Decodable { var places: [Place] }
    private struct PlaceReply: Decodable { var place: Place }
    private struct EventReply: Decodable { var event: TagEvent }
    private struct EventsReply: Decodable { var events: [TagEvent] }
    private struct PictureReply: Decodable { var picture: Picture }
    private struct LikesReply: Decodable { var likes: Int }
    private struct HiddenReply: Decodable { var hidden: Bool }

    /// The nearest places, nearest first (`places.nearest`): around the given point, or your last position when
    /// both coordinates are `nil`; `limit` 1 to 100 (20), `category` and `radius` (metres) filter before the limit.
    public func nearestPlaces(
        latitude: Double? = nil, longitude: Double? = nil, limit: Int? = nil, category: String? = nil,
        radius: Double? = nil
    ) async throws -> [Place] {
        var fields: [String: JSONValue] = [:]
        if let latitude { fields["lat"] = .double(latitude) }
        if let longitude { fields["lon"] = .double(longitude) }
        if let limit { fields["limit"] = .int(Int64(limit)) }
        if let category { fields["category"] = .string(category) }
        if let radius { fields["radius"] = .double(radius) }
        return try await request("places.nearest", fields, as: PlacesReply.self).places
    }

    /// Places whose name starts with `query`, ignoring case and accents (`places.search`).
    public func searchPlaces(_ query: String, limit: Int? = nil) async throws -> [Place] {
        var fields: [String: JSONValue] = ["q": .string(query)]
        if let limit { fields["limit"] = .int(Int64(limit)) }
        return try await request("places.search", fields, as: PlacesReply.self).places
    }

    /// One place with its source and attributes (`place.get`).
    public func place(_ id: Int64) async throws -> Place {
        try await request("place.get", ["place": .int(id)], as: PlaceReply.self).place
    }

    /// Creates an event, private when it has a password (`event.create`).
    public func createEvent(tag: String, title: String? = nil, password: String? = nil) async throws -> TagEvent {
        var fields: [String: JSONValue] = ["tag": .string(tag)]
        if let title { fields["title"] = .string(title) }
        if let password { fields["password"] = .string(password) }
        return try await request("event.create", fields, as: EventReply.self).event
    }

    /// Joins an event; a private one needs its password (`event.join`).
    @discardableResult
    public func joinEvent(tag: String, password: String? = nil) async throws -> TagEvent {
        var fields: [String: JSONValue] = ["tag": .string(tag)]
        if let password { fields["password"] = .string(password) }
        return try await request("event.join", fields, as: EventReply.self).event
    }

    /// An event by tag (`event.get`).
    public func event(tag: String) async throws -> TagEvent {
        try await request("event.get", ["tag": .string(tag)], as: EventReply.self).event
    }

    /// Events whose tag or title contains `query` (`event.search`).
    public func searchEvents(_ query: String) async throws -> [TagEvent] {
        try await request("event.search", ["q": .string(query)], as: EventsReply.self).events
    }

    /// Deletes your event with its pictures (`event.delete`).
    public func deleteEvent(tag: String) async throws {
        try await request("event.delete", ["tag": .string(tag)])
    }

    /// Posts a picture you uploaded (`picture.post`): nearby (at your latest position), or to an event (`place`
    /// adds your position there too).
    public func postPicture(media: String, caption: String? = nil, event: String? = nil, place: Bool? = nil)
        async throws -> Picture
    {
        var fields: [String: JSONValue] = ["media": .string(media)]
        if let caption { fields["caption"] = .string(caption) }
        if let event { fields["event"] = .string(event) }
        if let place { fields["place"] = .bool(place) }
        return try await request("picture.post", fields, as: PictureReply.self).picture
    }

    /// A picture by id (`picture.get`).
    public func picture(_ id: Int64) async throws -> Picture {
        try await request("picture.get", ["picture": .int(id)], as: PictureReply.self).picture
    }

    /// Likes a picture, or takes the like back (`picture.like` / `picture.unlike`); returns the like count.
    @discardableResult
    public func likePicture(_ id: Int64, _ like: Bool = true) async throws -> Int {
        try await request(like ? "picture.like" : "picture.unlike", ["picture": .int(id)], as: LikesReply.self)
            .likes
    }

    /// Deletes your picture (`picture.delete`).
    public func deletePicture(_ id: Int64) async throws {
        try await request("picture.delete", ["picture": .int(id)])
    }

    /// Reports a picture (`picture.report`): `spam`, `nudity`, `violence`, `harassment`, `copyright`, `privacy` or
    /// `other` (with `text`). Returns whether it is now hidden from everyone.
    @discardableResult
    public func reportPicture(_ id: Int64, reason: String, text: String? = nil) async throws -> Bool {
        var fields: [String: JSONValue] = ["picture": .int(id), "reason": .string(reason)]
        if let text { fields["text"] = .string(text) }
        return try await request("picture.report", fields, as: HiddenReply.self).hidden
    }

    /// Pictures within `radius` metres of you (`picture.nearby`); `sort` is `date`, `likes` or `distance`.
    public func nearbyPictures(radius: Double, sort: String? = nil, cursor: String? = nil) async throws
        -> PicturePage
    {
        var fields: [String: JSONValue] = ["radius": .double(radius)]
        if let sort { fields["sort"] = .string(sort) }
        if let cursor { fields["cursor"] = .string(cursor) }
        return try await request("picture.nearby", fields, as: PicturePage.self)
    }

    /// An event's pictures (`event.pictures`).
    public func eventPictures(tag: String, sort: String? = nil, cursor: String? = nil) async throws -> PicturePage {
        var fields: [String: JSONValue] = ["tag": .string(tag)]
        if let sort { fields["sort"] = .string(sort) }
        if let cursor { fields["cursor"] = .string(cursor) }
        return try await request("event.pictures", fields, as: PicturePage.self)
    }

    /// The newest pictures whose caption holds every word of `query`, and each `#tag` (`picture.search`).
    public func searchPictures(_ query: String) async throws -> [Picture] {
        try await request("picture.search", ["q": .string(query)], as: PicturePage.self).pictures
    }

    /// Watches new pictures within `radius` metres of you, or posted to `event` (`pictures.watch`, one of the two);
    /// they arrive as ``CairnEvent/pictureNew(_:)``. Sent again after every reconnect.
    public func watchPictures(radius: Double? = nil, event: String? = nil) async throws {
        var fields: [String: JSONValue] = [:]
        if let radius { fields["radius"] = .double(radius) }
        if let event { fields["event"] = .string(event) }
        _ = try await watch("pictures.watch", fields, as: JSONValue.self)
    }

    /// Stops watching pictures (`pictures.unwatch`).
    public func unwatchPictures() async throws {
        try await unwatch("pictures.watch")
    }
}
