// Accounts and sessions (docs/PROTOCOL.md, "Authentication"): register, login, guest, token sign-in, logout, whoami.
// A successful sign-in's token is kept for reconnects; logout forgets it with the watches.
import Foundation

extension CairnClient {
    private struct SessionReply: Decodable {
        var user: CairnUser
        var token: String
    }

    private struct UserReply: Decodable {
        var user: CairnUser
    }

    /// Creates an account and signs in as it (`register`). Opens the connection if there is none.
    /// - Parameters:
    ///   - username: 3-32 of `a-z`, `0-9`, `_`, `.`.
    ///   - password: at least 8 characters.
    ///   - name: a display name; the username when `nil`.
    /// - Throws: ``CairnError`` `username_taken`, `bad_request`, `rate_limited`, …
    @discardableResult
    public func register(username: String, password: String, name: String? = nil) async throws -> Session {
        var fields: [String: JSONValue] = ["username": .string(username), "password": .string(password)]
        if let name { fields["name"] = .string(name) }
        let reply = try await request("register", fields, as: SessionReply.self)
        return adopting(Session(user: reply.user, token: reply.token))
    }

    /// Signs in with a username (or email) and password (`login`). Opens the connection if there is none.
    /// - Throws: ``CairnError`` `invalid_credentials`, `suspended`, `rate_limited`, …
    @discardableResult
    public func login(username: String, password: String) async throws -> Session {
        let fields: [String: JSONValue] = ["username": .string(username), "password": .string(password)]
        let reply = try await request("login", fields, as: SessionReply.self)
        return adopting(Session(user: reply.user, token: reply.token))
    }

    /// Signs in as a new guest account (`guest`).
    @discardableResult
    public func guest() async throws -> Session {
        let reply = try await request("guest", as: SessionReply.self)
        return adopting(Session(user: reply.user, token: reply.token))
    }

    /// Signs in with a token from an earlier session (`auth`); the client keeps it for reconnects. This is also how
    /// an app switches to a fresh token it got elsewhere.
    /// - Throws: ``CairnError`` `unauthorized` (invalid, expired or revoked token), `suspended`.
    @discardableResult
    public func authenticate(token: String) async throws -> Session {
        let reply = try await request("auth", ["token": .string(token)], as: UserReply.self)
        return adopting(Session(user: reply.user, token: token))
    }

    /// Signs out (`logout`): revokes this token (`all: true`: every token of the account, "sign out everywhere") and
    /// forgets the token, the watches and any held position. The connection stays open, signed out.
    ///
    /// The client forgets the session even when the request fails (no connection within the timeout, the task
    /// cancelled): it never signs in again with a token the user signed out of. The error then says that the hub may
    /// not have revoked the token.
    public func logout(all: Bool = false) async throws {
        defer { forgetSession() }
        try await request("logout", all ? ["all": true] : [:])
    }

    /// The signed-in user as the hub knows it now (`whoami`).
    public func whoami() async throws -> CairnUser {
        try await request("whoami", as: UserReply.self).user
    }

    private func adopting(_ session: Session) -> Session {
        adopt(session)
        return session
    }
}
