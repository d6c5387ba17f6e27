// The admin role's ops (docs/PROTOCOL.md, Administration): browsing users and suspending them. Whether the caller
// is an admin is asked of the `RoleStore` off the loop at every request, in the same job as the work, so a grant
// or revocation made with `cairn user grant-admin` / `revoke-admin` counts from the next request. A suspension is
// committed together with its audit entry before the reply; then, on the loop, `Sessions` closes the account's
// connections with 4503. Two refusals are rules of their own: an admin cannot suspend themselves, and an admin
// cannot be suspended at all (revoke the role first, on the command line): admins cannot lock each other out.
public import CairnCore
import CairnErrorCodes
import CairnLoop
package import CairnSessions

/// A page of accounts and the cursor of the next one (nil on the last page).
public struct AdminUserPage: Sendable, Equatable {
    /// The accounts, in username order.
    public var users: [AdminUserRow]
    /// The `cursor` that asks for the next page.
    public var cursor: String?
}

/// The admin ops. Loop thread only.
public final class Administration {
    /// Accounts per page unless the request asks for fewer.
    public static let defaultPageSize = 50
    /// The most accounts a page holds.
    public static let maxPageSize = 100
    /// The longest suspension with an end, in seconds (ten years); longer ones are "until lifted".
    public static let maxSuspensionSeconds: Int64 = 10 * 366 * 86_400
    /// The longest reason, in bytes of UTF-8.
    public static let maxReasonBytes = 500

    let roles: (any RoleStore)?
    let store: (any AdminStore)?
    let work: LoopWork
    let clock: any Clock
    let sessions: Sessions
    /// The live settings (`Administration+Settings`).
    public let settings: AdminSettings
    /// The daily figures (`Administration+Stats`).
    public let statistics: AdminStatistics
    /// Settings changed here, for the other nodes (nil: a single node; `RemoteSettings`).
    package var remote: (any RemoteSettings)?

    package init(
        roles: (any RoleStore)?, store: (any AdminStore)?, work: LoopWork, clock: any Clock, sessions: Sessions,
        settings: AdminSettings, statistics: AdminStatistics
    ) {
        self.roles = roles
        self.store = store
        self.work = work
        self.clock = clock
        self.sessions = sessions
        self.settings = settings
        self.statistics = statistics
        settings.rereads.read = Self.storedSettingsReader(store: store, work: work)
    }

    package static let notAdmin = DomainError(.forbidden, "admin ops are for admins (cairn user grant-admin)")

    /// Runs `body` off the loop once the caller is confirmed an admin, then `then` on the loop if the caller's
    /// connection is still theirs.
    package func asAdmin<T: Sendable>(
        _ caller: Caller, _ body: @escaping @Sendable (any AdminStore) async throws(DomainError) -> T,
        then: @escaping Outcome<T>
    ) {
        guard let roles, let store else { return then(.failure(Self.notAdmin)) }
        let me = caller.user.id
        let connection = caller.connection
        work.run(
            { () async throws(DomainError) -> T in
                guard try await LoopWork.storage({ try await roles.hasRole(.admin, userID: me) }) else {
                    throw Self.notAdmin
                }
                return try await body(store)
            },
            then: { result in
                guard self.sessions.user(of: connection)?.id == me else {
                    return then(.failure(DomainError(.unauthorized, "the session ended")))
                }
                then(result)
            })
    }

    /// Answers success once the caller is confirmed an admin, `forbidden` otherwise: asked before a request that
    /// cannot be read is answered `bad_request` (`OpTable.admin`).
    public func admits(_ caller: Caller, _ done: @escaping Outcome<Void>) {
        asAdmin(caller, { _ async throws(DomainError) in }, then: done)
    }

    /// Answers `error` (a request an admin got wrong) once the caller is confirmed an admin, `forbidden` otherwise:
    /// what is wrong with a request is told to admins only.
    package func refuse<T>(_ caller: Caller, _ error: DomainError, _ done: @escaping Outcome<T>) {
        admits(caller) { admitted in
            if case .failure(let refusal) = admitted { return done(.failure(refusal)) }
            done(.failure(error))
        }
    }

    // MARK: Browsing

    /// A page of accounts whose username or email starts with `query` (case-insensitive), after `cursor`.
    public func users(
        _ caller: Caller, query: String?, cursor: String?, limit: Int64?, guests: Bool,
        _ done: @escaping Outcome<AdminUserPage>
    ) {
        // Bytes first (O(1)), before trimming and lowercasing spend time in proportion to the text on the loop.
        if let query, query.utf8.count > 1024 {
            return refuse(caller, .badRequest("field 'q' must be at most 254 bytes"), done)
        }
        let prefix = query.map { $0.trimmingWhitespace().lowercased() }.flatMap { $0.isEmpty ? nil : $0 }
        if let prefix, prefix.utf8.count > 254 {
            return refuse(caller, .badRequest("field 'q' must be at most 254 bytes"), done)
        }
        if let cursor, cursor.isEmpty || cursor.utf8.count > 64 {
            return refuse(caller, .badRequest("field 'cursor' is not a cursor this op gave"), done)
        }
        let size = limit ?? Int64(Self.defaultPageSize)
        guard (1...Int64(Self.maxPageSize)).contains(size) else {
            return refuse(caller, .badRequest("field 'limit' must be 1–\(Self.maxPageSize)"), done)
        }
        let query = AdminUserQuery(prefix: prefix, after: cursor, guests: guests, limit: Int(size) + 1)
        let now = clock.now()
        asAdmin(
            caller,
            { store async throws(DomainError) -> AdminUserPage in
                var rows = try await LoopWork.storage { try await store.adminUsers(query, now: now) }
                let more = rows.count > Int(size)
                if more { rows.removeLast(rows.count - Int(size)) }
                return AdminUserPage(users: rows, cursor: more ? rows.last?.user.username : nil)
            }, then: done)
    }

    // MARK: Suspension

    /// Suspends `target` for `seconds` (nil: until lifted) because of `reason`, audited; closes its connections
    /// with 4503 once committed. Answers the account as it now stands.
    public func suspend(
        _ caller: Caller, user target: Int64, reason rawReason: String, seconds: Int64?,
        _ done: @escaping Outcome<AdminUserRow>
    ) {
        let reason = rawReason.trimmingWhitespace()
        guard !reason.isEmpty else { return refuse(caller, .badRequest("field 'reason' must not be empty"), done) }
        guard reason.utf8.count <= Self.maxReasonBytes else {
            return refuse(caller, .badRequest("field 'reason' must be at most \(Self.maxReasonBytes) bytes"), done)
        }
        guard !reason.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return refuse(caller, .badRequest("field 'reason' must not contain control characters"), done)
        }
        if let seconds, !(1...Self.maxSuspensionSeconds).contains(seconds) {
            let message = "field 'for' must be 1–\(Self.maxSuspensionSeconds) seconds, or left out"
            return refuse(caller, .badRequest(message), done)
        }
        guard target != caller.user.id else {
            return refuse(caller, DomainError(.forbidden, "an admin cannot suspend themselves"), done)
        }
        let now = clock.now()
        let suspension = Suspension(reason: reason, since: now, until: seconds.map { now + $0 * 1000 })
        let admin = caller.user
        let roles = self.roles
        asAdmin(
            caller,
            { store async throws(DomainError) -> AdminUserRow in
                guard var row = try await LoopWork.storage({ try await store.adminUser(id: target, now: now) })
                else { throw DomainError(.notFound, "no such user") }
                let targetIsAdmin = try await LoopWork.storage { try await roles?.hasRole(.admin, userID: target) }
                if row.isAdmin || targetIsAdmin == true {
                    throw DomainError(.forbidden, "an admin cannot be suspended; revoke the role first")
                }
                let audit = AuditEntry(
                    at: now, admin: admin, action: "user.suspend", targetKind: "user", targetID: target,
                    targetName: row.user.username, reason: reason,
                    detail: suspension.until.map { "until=\($0)" } ?? "until=lifted")
                try await LoopWork.storage { try await store.suspend(userID: target, suspension, audit: audit) }
                row.suspension = suspension
                return row
            },
            then: { result in
                if case .success = result { self.sessions.suspended(target) }
                done(result)
            })
    }

    /// Lifts `target`'s suspension, audited; answers whether there was one.
    public func unsuspend(_ caller: Caller, user target: Int64, _ done: @escaping Outcome<Bool>) {
        let now = clock.now()
        let admin = caller.user
        asAdmin(
            caller,
            { store async throws(DomainError) -> Bool in
                guard let row = try await LoopWork.storage({ try await store.adminUser(id: target, now: now) })
                else { throw DomainError(.notFound, "no such user") }
                let audit = AuditEntry(
                    at: now, admin: admin, action: "user.unsuspend", targetKind: "user", targetID: target,
                    targetName: row.user.username, reason: nil, detail: nil)
                return try await LoopWork.storage { try await store.unsuspend(userID: target, audit: audit) }
            }, then: done)
    }

    // MARK: Audit

    /// The newest audit entries (at most `maxPageSize`), with ids below `before` when given; answers them and
    /// the `before` of the next page.
    public func audit(
        _ caller: Caller, before: Int64?, _ done: @escaping Outcome<(entries: [(Int64, AuditEntry)], next: Int64?)>
    ) {
        if let before, before <= 0 { return refuse(caller, .badRequest("field 'before' must be positive"), done) }
        let size = Self.defaultPageSize
        asAdmin(
            caller,
            { store async throws(DomainError) -> (entries: [(Int64, AuditEntry)], next: Int64?) in
                let rows = try await LoopWork.storage { try await store.auditLog(before: before, limit: size + 1) }
                let page = rows.prefix(size).map { ($0.id, $0.entry) }
                return (page, rows.count > size ? page.last?.0 : nil)
            }, then: done)
    }
}
