// Friends, sharing and positions (docs/PROTOCOL.md, "Friends", "Positions", "Privacy"): search, requests, the friend
// list, sharing levels and ghost mode, reporting a position and watching friends'.
import Foundation

extension CairnClient {
    private struct UsersReply: Decodable { var users: [CairnUser] }
    private struct StatusReply: Decodable { var status: FriendStatus }
    private struct AcceptReply: Decodable { var friend: Friend }
    private struct FriendsReply: Decodable { var friends: [Friend] }
    private struct PauseReply: Decodable { var until: Int64? }

    /// Users whose username or display name starts with `query` (`user.search`; at most 20, never guests).
    public func searchUsers(_ query: String) async throws -> [CairnUser] {
        try await request("user.search", ["q": .string(query)], as: UsersReply.self).users
    }

    /// Asks `user` to be friends (`friend.request`). Returns `.pending`, or `.friends` when they had asked you too.
    @discardableResult
    public func requestFriend(_ user: Int64) async throws -> FriendStatus {
        try await request("friend.request", ["user": .int(user)], as: StatusReply.self).status
    }

    /// Accepts `user`'s request (`friend.accept`) and returns the new friend.
    @discardableResult
    public func acceptFriend(_ user: Int64) async throws -> Friend {
        try await request("friend.accept", ["user": .int(user)], as: AcceptReply.self).friend
    }

    /// Declines `user`'s request (`friend.decline`); they are not told.
    public func declineFriend(_ user: Int64) async throws {
        try await request("friend.decline", ["user": .int(user)])
    }

    /// Ends a friendship, or withdraws your unanswered request (`friend.remove`).
    @discardableResult
    public func removeFriend(_ user: Int64) async throws -> FriendStatus {
        try await request("friend.remove", ["user": .int(user)], as: StatusReply.self).status
    }

    /// Your friends, with whether you may know them online (`friend.list`).
    public func friends() async throws -> [Friend] {
        try await request("friend.list", as: FriendsReply.self).friends
    }

    /// Friend requests waiting either way (`friend.requests`).
    public func friendRequests() async throws -> FriendRequests {
        try await request("friend.requests", as: FriendRequests.self)
    }

    /// Reports your position (`pos`, without waiting for a reply). While not connected the position is held and
    /// sent once the client is connected again; only the latest one is kept (latest wins).
    /// - Parameters:
    ///   - latitude: WGS84 degrees, [-90, 90].
    ///   - longitude: WGS84 degrees, [-180, 180].
    ///   - accuracy: metres.
    ///   - altitude: metres.
    ///   - speed: m/s.
    ///   - heading: degrees, [0, 360).
    ///   - battery: percent.
    ///   - timestamp: ms since the epoch; the hub's clock when `nil`.
    /// - Throws: ``CairnError`` `bad_request` for a coordinate out of range or a NaN or infinite value (checked here,
    ///   before sending), `closed`
    ///   after ``close()``. What the hub refuses later arrives as a ``CairnEvent/error(op:_:)`` event.
    public func report(
        latitude: Double, longitude: Double, accuracy: Double? = nil, altitude: Double? = nil, speed: Double? = nil,
        heading: Double? = nil, battery: Double? = nil, timestamp: Int64? = nil
    ) async throws {
        guard (-90...90).contains(latitude) else {
            throw CairnError(code: "bad_request", message: "field 'lat' must be between -90 and 90", op: "pos")
        }
        guard (-180...180).contains(longitude) else {
            throw CairnError(code: "bad_request", message: "field 'lon' must be between -180 and 180", op: "pos")
        }
        var fields: [String: JSONValue] = ["lat": .double(latitude), "lon": .double(longitude)]
        let optional: [(String, Double?)] = [
            ("acc", accuracy), ("alt", altitude), ("spd", speed), ("hdg", heading), ("bat", battery),
        ]
        for case (let key, let value?) in optional {
            guard value.isFinite else {
                throw CairnError(code: "bad_request", message: "field '\(key)' must be a finite number", op: "pos")
            }
            fields[key] = .double(value)
        }
        if let timestamp { fields["ts"] = .int(timestamp) }
        try send(position: fields)
    }

    /// Watches friends (`friends.watch`): returns every friend's last visible position, and from then on their moves
    /// arrive as ``CairnEvent/position(_:)``. The client sends it again after every reconnect and publishes the
    /// fresh answer as ``CairnEvent/friendPositions(_:)``.
    @discardableResult
    public func watchFriends() async throws -> [FriendPosition] {
        try await watch("friends.watch", as: FriendsWatchReply.self).positions
    }

    /// Stops watching friends (`friends.unwatch`).
    public func unwatchFriends() async throws {
        try await unwatch("friends.watch")
    }

    /// Ghost mode (`share.pause`): every friend sees you hidden, for `duration` or until ``resumeSharing()``.
    /// Returns when a timed pause ends (ms since the epoch).
    @discardableResult
    public func pauseSharing(for duration: Duration? = nil) async throws -> Int64? {
        var fields: [String: JSONValue] = [:]
        if let duration { fields["for"] = .int(duration.components.seconds) }
        return try await request("share.pause", fields, as: PauseReply.self).until
    }

    /// Ends ghost mode (`share.resume`).
    public func resumeSharing() async throws {
        try await request("share.resume")
    }

    /// Gives one friend a level (`share.set`), for `duration` or for good.
    @discardableResult
    public func setSharing(_ level: SharingLevel, for user: Int64, duration: Duration? = nil) async throws
        -> SharingChange
    {
        var fields: [String: JSONValue] = ["user": .int(user), "level": .string(level.rawValue)]
        if let duration { fields["for"] = .int(duration.components.seconds) }
        return try await request("share.set", fields, as: SharingChange.self)
    }

    /// What you share now (`share.list`).
    public func sharingSettings() async throws -> SharingSettings {
        try await request("share.list", as: SharingSettings.self)
    }
}
