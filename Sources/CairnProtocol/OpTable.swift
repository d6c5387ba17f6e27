// The op table: every op the hub understands, registered by the feature that owns it — its name, who may call it,
// a typed decoder that turns the request's fields into a value, the handler that asks the domain, and the encoder
// that writes the answer — the way a router registers routes or Redis lists its commands. The router looks an op
// up here and knows nothing else about it, so adding an op touches only its feature's file in `Ops/`.
//
// Two shapes of handler: `fast` answers before it returns (the hot path: no closure is made per request) and
// `slow` answers through an `Outcome` later, on the loop, while the connection's later requests wait in order.
public import CairnCore
public import CairnLoop
public import CairnWire

/// Who may call an op.
public enum OpAccess: Sendable, Equatable {
    /// Any connection, authenticated or not (account ops).
    case anyone
    /// Connections bound to an account.
    case member
}

/// How the router answers a request: with the reply's fields, or an error.
struct Answer {
    unowned let router: Router
    let connection: ConnectionID
    let id: Int64?
    let op: String

    /// Writes `{"id":…,"ok":true,…}` (nothing when the request had no id).
    func ok(_ fields: (inout JSONWriter) -> Void) { router.replyOK(connection, id: id, fields) }
    /// Writes the error as a reply (or an `error` event when the request had no id).
    func fail(_ error: WireError) { router.fail(connection, id: id, op: op, error) }
}

/// One registered op, its types erased.
struct OpEntry {
    let access: OpAccess
    /// True when the handler may answer later (the connection then waits).
    let slow: Bool
    let run: (borrowing Message, ConnectionID, User?, Answer, _ done: (() -> Void)?) throws(WireError) -> Void
}

/// The table of ops, filled by each feature's `register(in:)`.
public struct OpTable {
    private(set) var entries: [String: OpEntry] = [:]

    /// An empty table.
    public init() {}

    /// The names registered, sorted.
    public var names: [String] { entries.keys.sorted() }

    /// Registers an op that answers before it returns.
    public mutating func fast<Request, Response>(
        _ name: String, access: OpAccess = .member,
        decode: @escaping (borrowing Message) throws(WireError) -> Request,
        handle: @escaping (OpCaller, Request) throws(DomainError) -> Response,
        encode: @escaping (Response, inout JSONWriter) -> Void
    ) {
        precondition(entries[name] == nil, "op '\(name)' registered twice")
        entries[name] = OpEntry(access: access, slow: false) { message, connection, user, answer, _ throws(WireError) in
            let request = try decode(message)
            let response: Response
            do throws(DomainError) {
                response = try handle(OpCaller(connection: connection, user: user), request)
            } catch {
                answer.fail(error.wire)
                return
            }
            answer.ok { w in encode(response, &w) }
        }
    }

    /// Registers an op handled at once like a fast one, but answered only when `confirm` calls back (nil: confirmed,
    /// else the error to answer), e.g. once its change is on disk; the connection's next requests wait for that. A
    /// request without an id has no answer to hold back and is not waited for.
    public mutating func confirmed<Request, Response>(
        _ name: String, access: OpAccess = .member,
        decode: @escaping (borrowing Message) throws(WireError) -> Request,
        handle: @escaping (OpCaller, Request) throws(DomainError) -> Response,
        confirm: @escaping (@escaping (DomainError?) -> Void) -> Void,
        encode: @escaping (Response, inout JSONWriter) -> Void
    ) {
        precondition(entries[name] == nil, "op '\(name)' registered twice")
        entries[name] = OpEntry(access: access, slow: true) {
            message, connection, user, answer, done throws(WireError) in
            let request = try decode(message)
            let response: Response
            do throws(DomainError) {
                response = try handle(OpCaller(connection: connection, user: user), request)
            } catch {
                answer.fail(error.wire)
                done?()
                return
            }
            guard answer.id != nil else {
                done?()
                return
            }
            confirm { error in
                if let error { answer.fail(error.wire) } else { answer.ok { w in encode(response, &w) } }
                done?()
            }
        }
    }

    /// Registers an op that answers through an outcome, possibly later.
    public mutating func slow<Request, Response>(
        _ name: String, access: OpAccess = .member,
        decode: @escaping (borrowing Message) throws(WireError) -> Request,
        handle: @escaping (OpCaller, Request, @escaping Outcome<Response>) -> Void,
        encode: @escaping (Response, inout JSONWriter) -> Void
    ) {
        precondition(entries[name] == nil, "op '\(name)' registered twice")
        entries[name] = OpEntry(access: access, slow: true) {
            message, connection, user, answer, done throws(WireError) in
            let request = try decode(message)
            handle(OpCaller(connection: connection, user: user), request) { result in
                switch result {
                case .success(let response): answer.ok { w in encode(response, &w) }
                case .failure(let error): answer.fail(error.wire)
                }
                done?()
            }
        }
    }

    /// Registers an op for admins only: to anyone else it is `forbidden` whatever the request holds, so a
    /// malformed request tells a non-admin nothing of the op's fields or bounds. A request that decodes goes to the
    /// handler, whose domain confirms the role before it looks at anything (`Administration`); one that does not is
    /// answered `bad_request` only once `gate` has confirmed the caller is an admin.
    public mutating func admin<Request, Response>(
        _ name: String, gate: @escaping (Caller, @escaping Outcome<Void>) -> Void,
        decode: @escaping (borrowing Message) throws(WireError) -> Request,
        handle: @escaping (OpCaller, Request, @escaping Outcome<Response>) -> Void,
        encode: @escaping (Response, inout JSONWriter) -> Void
    ) {
        precondition(entries[name] == nil, "op '\(name)' registered twice")
        entries[name] = OpEntry(access: .member, slow: true) { message, connection, user, answer, done in
            let caller = OpCaller(connection: connection, user: user)
            let request: Request
            do throws(WireError) { request = try decode(message) } catch {
                gate(caller.member) { admitted in
                    switch admitted {
                    case .success: answer.fail(error)
                    case .failure(let refusal): answer.fail(refusal.wire)
                    }
                    done?()
                }
                return
            }
            handle(caller, request) { result in
                switch result {
                case .success(let response): answer.ok { w in encode(response, &w) }
                case .failure(let error): answer.fail(error.wire)
                }
                done?()
            }
        }
    }
}

/// The caller as an op handler sees it: the connection and, for member ops, the account.
public struct OpCaller {
    /// The connection the request came on.
    public let connection: ConnectionID
    /// The account bound to it, if any (always set for member ops).
    public let user: User?

    /// The caller of a member op.
    public var member: Caller { Caller(connection: connection, user: user!) }
}

/// Decoders shared by several features.
enum Fields {
    /// No fields needed.
    static func none(_ message: borrowing Message) throws(WireError) {}

    /// The `user` field: a positive user id.
    static func userID(_ message: borrowing Message) throws(WireError) -> Int64 {
        let target = try message.requireInt("user")
        guard target > 0 else { throw .badRequest("field 'user' must be a positive user id") }
        return target
    }

    /// An empty reply.
    static func empty(_: Void, _ w: inout JSONWriter) {}
}
