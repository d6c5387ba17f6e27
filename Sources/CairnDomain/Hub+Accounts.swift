// The account ops on the hub: register, login, guest, auth, logout and whoami, plus binding a connection to a
// user (which is also where presence starts and ends). The rules themselves live in `Accounts`.
import CairnWire

extension Hub {
    /// Handles the ops allowed before authentication (and `whoami`); returns false for any other op.
    func dispatchAccount(_ op: String, id: Int64?, from client: Client) throws(WireError) -> Bool {
        let accounts = self.accounts
        switch op {
        case "register":
            let username = try message.requireString("username")
            let password = try message.requireString("password")
            let name = try message.string("name")
            start(client, id: id, op: op, { () async throws(WireError) -> Session in
                try await accounts.register(username: username, password: password, name: name)
            }, then: { client, session in self.opened(client, session, id: id) })
        case "login":
            let username = try message.requireString("username")
            let password = try message.requireString("password")
            let connection = client.id
            start(client, id: id, op: op, { () async throws(WireError) -> Session in
                try await accounts.login(username: username, password: password, connection: connection)
            }, then: { client, session in self.opened(client, session, id: id) })
        case "guest":
            start(client, id: id, op: op, { () async throws(WireError) -> Session in
                try await accounts.guest()
            }, then: { client, session in self.opened(client, session, id: id) })
        case "auth":
            let token = try message.requireString("token")
            start(client, id: id, op: op, { () async throws(WireError) -> User in
                try await accounts.authenticate(token: token)
            }, then: { client, user in
                guard let client else { return }
                self.bind(client, to: user, token: token)
                self.replyOK(client, id: id) { w in w.key("user"); user.write(to: &w) }
            })
        case "logout":
            guard let token = client.token else {
                replyOK(client, id: id) { _ in }
                return true
            }
            start(client, id: id, op: op, { () async throws(WireError) -> Bool in
                try await accounts.logout(token: token)
                return true
            }, then: { client, _ in self.loggedOut(client, token: token, id: id) })
        case "whoami":
            guard let user = client.user else {
                throw WireError(.unauthorized, "authenticate first: register, login, guest or auth")
            }
            replyOK(client, id: id) { w in w.key("user"); user.write(to: &w) }
        default:
            return false
        }
        return true
    }

    func authenticateOnUpgrade(_ client: Client, token: String) {
        let accounts = self.accounts
        start(client, id: nil, op: "auth", { () async throws(WireError) -> User in
            try await accounts.authenticate(token: token)
        }, onFailure: { client, error in
            guard let client else { return }
            if error.code == .unauthorized {
                self.outbound?.close(client.id, code: CloseCode.invalidToken.rawValue, reason: "invalid token")
            } else {
                // Not the token's fault (e.g. storage trouble): a close the client may retry after.
                self.outbound?.close(client.id, code: CloseCode.tryAgainLater.rawValue, reason: "could not check the token; retry")
            }
        }, then: { client, user in
            guard let client else { return }
            self.bind(client, to: user, token: token)
        })
    }

    private func opened(_ client: Client?, _ session: Session, id: Int64?) {
        guard let client else { return }
        bind(client, to: session.user, token: session.token)
        replyOK(client, id: id) { w in
            w.key("user"); session.user.write(to: &w)
            w.key("token"); w.string(session.token)
        }
    }

    private func loggedOut(_ client: Client?, token: String, id: Int64?) {
        rememberRevoked(token)
        if let client {
            unbind(client)
            authDeadlines[client.id] = clock.now() + configuration.authTimeoutMs
            replyOK(client, id: id) { _ in }
        }
        // Every other connection that used the revoked token loses its session too, even if this one has gone.
        for other in clients.values where other.id != client?.id && other.token == token {
            unbind(other)
            outbound?.close(other.id, code: CloseCode.invalidToken.rawValue, reason: "token revoked")
        }
    }

    /// Attaches a connection to a user (switching accounts if it had one); the first connection makes them online.
    func bind(_ client: Client, to user: User, token: String) {
        if revokedTokens.contains(token) {
            // Checked just before a logout of the same token committed: the session must not start.
            if client.token == token { unbind(client) }
            outbound?.close(client.id, code: CloseCode.invalidToken.rawValue, reason: "token revoked")
            return
        }
        if client.user?.id == user.id {
            client.token = token  // the same user again (e.g. a fresh login): no presence change
            return
        }
        if client.user != nil { unbind(client) }
        client.user = user
        client.token = token
        authDeadlines[client.id] = nil
        let wasOnline = !(sessions[user.id]?.isEmpty ?? true)
        sessions[user.id, default: []].append(client.id)
        if !wasOnline { announcePresence(of: user.id, online: true) }
    }

    /// Remembers a revoked token for a while, so a check that raced the revocation cannot bind it. Bounded: the
    /// oldest entries are forgotten first (by then any check that read the token before it was deleted is done).
    func rememberRevoked(_ token: String) {
        guard revokedTokens.insert(token).inserted else { return }
        revokedOrder.append(token)
        if revokedOrder.count > 4096 {
            revokedTokens.remove(revokedOrder.removeFirst())
        }
    }

    /// Detaches a connection from its user; the last connection going makes them offline.
    func unbind(_ client: Client) {
        guard let user = client.user else { return }
        if client.watching { stopWatching(client, user: user.id) }
        relics.forget(connection: client.id)  // the markers it was shown were shown to that account
        stopWatchingStats(client.id)
        client.user = nil
        client.token = nil
        sessions[user.id]?.removeAll { $0 == client.id }
        if sessions[user.id]?.isEmpty ?? false {
            sessions[user.id] = nil
            relics.forget(user: user.id)
            announcePresence(of: user.id, online: false)
        }
    }
}
