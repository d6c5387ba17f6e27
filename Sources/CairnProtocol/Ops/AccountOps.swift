// Account ops: register, login, guest, auth and logout (allowed before authentication; `logout {all: true}` revokes
// every token of the account) and whoami. `register` takes an optional `email`; `login` takes an email in
// `username` (or in `email` when `username` is left out). Each binds or unbinds the connection through
// `Sessions`; the rules live in `Accounts`.
import CairnCore
import CairnSessions
import CairnWire

enum AccountOps {
    static func register(in table: inout OpTable, sessions: Sessions) {
        table.slow(
            "register", access: .anyone,
            decode: { m throws(WireError) in
                (
                    try m.requireString("username"), try m.requireString("password"), try m.string("name"),
                    try m.string("email")
                )
            },
            handle: { caller, r, done in
                sessions.register(caller.connection, username: r.0, password: r.1, name: r.2, email: r.3, done)
            }, encode: writeSession)

        table.slow(
            "login", access: .anyone,
            decode: { m throws(WireError) in
                // The email stands in for the username only when the username is left out.
                let username = try m.string("username")
                let email = try m.string("email")
                if username == nil, let email { return (email, try m.requireString("password")) }
                return (try m.requireString("username"), try m.requireString("password"))
            },
            handle: { caller, r, done in
                sessions.login(caller.connection, username: r.0, password: r.1, done)
            }, encode: writeSession)

        table.slow(
            "guest", access: .anyone, decode: Fields.none,
            handle: { caller, _, done in
                sessions.guest(caller.connection, done)
            }, encode: writeSession)

        table.slow(
            "auth", access: .anyone, decode: { m throws(WireError) in try m.requireString("token") },
            handle: { caller, token, done in sessions.auth(caller.connection, token: token, done) },
            encode: { user, w in
                w.key("user")
                user.write(to: &w)
            })

        table.slow(
            "logout", access: .anyone, decode: { m throws(WireError) in try m.bool("all") ?? false },
            handle: { caller, everywhere, done in
                sessions.logout(caller.connection, everywhere: everywhere, done)
            }, encode: Fields.empty)

        table.fast(
            "whoami", access: .anyone, decode: Fields.none,
            handle: { caller, _ throws(DomainError) in
                guard let user = caller.user else { throw DomainError.unauthenticated }
                return user
            },
            encode: { user, w in
                w.key("user")
                user.write(to: &w)
            })
    }

    private static func writeSession(_ session: Session, _ w: inout JSONWriter) {
        w.key("user")
        session.user.write(to: &w)
        w.key("token")
        w.string(session.token)
    }
}
