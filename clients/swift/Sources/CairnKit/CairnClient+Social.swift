// Chat and profiles (docs/PROTOCOL.md, "Chat", "Profiles"): messages between friends with read marks, and the display
// name, bio and photo of an account.
import Foundation

extension CairnClient {
    private struct MessageReply: Decodable { var message: ChatMessage }
    private struct ConversationsReply: Decodable { var conversations: [Conversation] }
    private struct UnreadReply: Decodable { var unread: Int }
    private struct ProfileReply: Decodable { var user: Profile }

    /// Sends a chat message to a friend (`chat.send`); it also arrives on your other connections as
    /// ``CairnEvent/chatMessage(_:)``.
    @discardableResult
    public func sendMessage(to user: Int64, text: String) async throws -> ChatMessage {
        try await request("chat.send", ["to": .int(user), "text": .string(text)], as: MessageReply.self).message
    }

    /// Your conversations, most recent first (`chat.list`).
    public func conversations() async throws -> [Conversation] {
        try await request("chat.list", as: ConversationsReply.self).conversations
    }

    /// A page of the conversation with `user`, oldest first (`chat.history`); ask again `before` the first id.
    public func chatHistory(with user: Int64, before: Int64? = nil, limit: Int? = nil) async throws -> ChatHistory {
        var fields: [String: JSONValue] = ["with": .int(user)]
        if let before { fields["before"] = .int(before) }
        if let limit { fields["limit"] = .int(Int64(limit)) }
        return try await request("chat.history", fields, as: ChatHistory.self)
    }

    /// Marks `user`'s messages up to `upto` read (`chat.read`); returns how many of theirs are still unread.
    @discardableResult
    public func markRead(with user: Int64, upto: Int64) async throws -> Int {
        try await request("chat.read", ["with": .int(user), "upto": .int(upto)], as: UnreadReply.self).unread
    }

    /// Changes your profile (`profile.set`): each argument that is not `nil` is set; `.null` removes a bio or photo.
    /// - Parameters:
    ///   - name: a display name.
    ///   - bio: `.string(…)` to set, `.null` to remove.
    ///   - photo: a media id from ``upload(_:contentType:)`` as `.string(…)`, or `.null` to remove.
    @discardableResult
    public func setProfile(name: String? = nil, bio: JSONValue? = nil, photo: JSONValue? = nil) async throws -> Profile
    {
        var fields: [String: JSONValue] = [:]
        if let name { fields["name"] = .string(name) }
        if let bio { fields["bio"] = bio }
        if let photo { fields["photo"] = photo }
        return try await request("profile.set", fields, as: ProfileReply.self).user
    }

    /// Anyone's profile by id (`user.get`).
    public func profile(of user: Int64) async throws -> Profile {
        try await request("user.get", ["user": .int(user)], as: ProfileReply.self).user
    }
}
