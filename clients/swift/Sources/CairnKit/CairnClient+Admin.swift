// Admin and operator ops (docs/PROTOCOL.md, "Administration", "Stats channel", "Writing places"). The common ones are
// typed here; the rest (`admin.audit`, `admin.settings.*`, `admin.stats`, `admin.reports`, `admin.picture.*`,
// `admin.event.update`, `place.upsert`, `place.remove`, `places.reload`) go through `request(_:_:)`, which answers
// JSON, because only admin tools use them and their rows are wide and still growing.
import Foundation

extension CairnClient {
    private struct AdminUsersReply: Decodable {
        var users: [JSONValue]
        var cursor: String?
    }

    /// A page of accounts (`admin.users`, admins only): rows as JSON (docs/PROTOCOL.md lists their fields), and the
    /// cursor of the next page.
    public func adminUsers(query: String? = nil, cursor: String? = nil, limit: Int? = nil, guests: Bool = false)
        async throws -> (users: [JSONValue], cursor: String?)
    {
        var fields: [String: JSONValue] = [:]
        if let query { fields["q"] = .string(query) }
        if let cursor { fields["cursor"] = .string(cursor) }
        if let limit { fields["limit"] = .int(Int64(limit)) }
        if guests { fields["guests"] = true }
        let reply = try await request("admin.users", fields, as: AdminUsersReply.self)
        return (reply.users, reply.cursor)
    }

    /// Suspends an account (`admin.user.suspend`, admins only), for `duration` or until lifted; its connections are
    /// closed with 4503.
    public func suspendUser(_ user: Int64, reason: String, for duration: Duration? = nil) async throws {
        var fields: [String: JSONValue] = ["user": .int(user), "reason": .string(reason)]
        if let duration { fields["for"] = .int(duration.components.seconds) }
        try await request("admin.user.suspend", fields)
    }

    /// Lifts a suspension (`admin.user.unsuspend`); returns whether there was one.
    @discardableResult
    public func unsuspendUser(_ user: Int64) async throws -> Bool {
        try await request("admin.user.unsuspend", ["user": .int(user)])["lifted"]?.boolValue ?? false
    }

    /// Watches the hub's live figures (`stats.watch`, the ops role): a ``CairnEvent/stats(_:)`` about once a second.
    /// Sent again after every reconnect.
    public func watchStats() async throws {
        _ = try await watch("stats.watch", as: JSONValue.self)
    }

    /// Stops the figures (`stats.unwatch`).
    public func unwatchStats() async throws {
        try await unwatch("stats.watch")
    }
}
