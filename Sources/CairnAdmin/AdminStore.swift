// What the admin feature needs from durable storage, as a protocol so the domain knows nothing of SQLite: the user
// list an admin browses, with the figures that exist for each account (PicShare's among them), and suspensions
// written together with their audit entry, in one transaction, committed before the call returns.
public import CairnCore
public import CairnSessions

/// One account as an admin sees it.
public struct AdminUserRow: Sendable, Equatable {
    /// The account.
    public var user: User
    /// Its email address, if it gave one.
    public var email: String?
    /// When it was created, ms since the epoch.
    public var createdAt: Int64
    /// Its last activity, ms since the epoch.
    public var lastSeenAt: Int64?
    /// True when it holds the admin role.
    public var isAdmin: Bool
    /// Its suspension in force, if any.
    public var suspension: Suspension?
    /// How many friends it has.
    public var friends: Int
    /// How many buckets it owns.
    public var buckets: Int
    /// How many relics it has left (live or not yet purged).
    public var relics: Int
    /// How many pictures it posted that are still stored (hidden and removed ones included).
    public var pictures: Int
    /// How many likes its pictures received, in all (likes it gave are not counted).
    public var likesReceived: Int
    /// How many open reports there are against its pictures.
    public var openReports: Int

    /// Creates the value.
    public init(
        user: User, email: String?, createdAt: Int64, lastSeenAt: Int64?, isAdmin: Bool, suspension: Suspension?,
        friends: Int, buckets: Int, relics: Int, pictures: Int = 0, likesReceived: Int = 0, openReports: Int = 0
    ) {
        self.user = user
        self.email = email
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
        self.isAdmin = isAdmin
        self.suspension = suspension
        self.friends = friends
        self.buckets = buckets
        self.relics = relics
        self.pictures = pictures
        self.likesReceived = likesReceived
        self.openReports = openReports
    }
}

/// What an admin browses: a prefix of username or email (lower-cased), the cursor, the page size.
public struct AdminUserQuery: Sendable, Equatable {
    /// Accounts whose username or email starts with this; nil: every account.
    public var prefix: String?
    /// Only accounts whose username sorts after this (the previous page's last); nil: from the start.
    public var after: String?
    /// Include guest accounts.
    public var guests: Bool
    /// At most this many rows.
    public var limit: Int

    /// Creates the value.
    public init(prefix: String?, after: String?, guests: Bool, limit: Int) {
        self.prefix = prefix
        self.after = after
        self.guests = guests
        self.limit = limit
    }
}

/// One line of the admin audit log: who did what to which object, when and why.
public struct AuditEntry: Sendable, Equatable {
    /// When, ms since the epoch.
    public var at: Int64
    /// The admin's account.
    public var admin: User
    /// What was done, e.g. `user.suspend`.
    public var action: String
    /// The kind of object acted on, e.g. `user`.
    public var targetKind: String
    /// Its id.
    public var targetID: Int64
    /// Its name when it has one (a username), copied so the line reads after the object is gone.
    public var targetName: String?
    /// The admin's reason, if given.
    public var reason: String?
    /// Anything else worth keeping (e.g. `until=…`).
    public var detail: String?

    /// Creates the value.
    public init(
        at: Int64, admin: User, action: String, targetKind: String, targetID: Int64, targetName: String?,
        reason: String?, detail: String?
    ) {
        self.at = at
        self.admin = admin
        self.action = action
        self.targetKind = targetKind
        self.targetID = targetID
        self.targetName = targetName
        self.reason = reason
        self.detail = detail
    }
}

/// Durable storage of the admin feature.
public protocol AdminStore: AdminSettingsStore, ActivityStore {
    /// A page of accounts in username order, with suspensions in force at `now`.
    func adminUsers(_ query: AdminUserQuery, now: Int64) async throws -> [AdminUserRow]
    /// One account as an admin sees it, or nil when there is none.
    func adminUser(id: Int64, now: Int64) async throws -> AdminUserRow?
    /// Stores `suspension` of `userID` (replacing any earlier one) and appends `audit`, in one transaction.
    func suspend(userID: Int64, _ suspension: Suspension, audit: AuditEntry) async throws
    /// Lifts the suspension of `userID`; when there was one, appends `audit` in the same transaction. True when
    /// one was lifted (even one that had run out).
    func unsuspend(userID: Int64, audit: AuditEntry) async throws -> Bool
    /// The newest audit entries, newest first, with ids below `before` when given.
    func auditLog(before: Int64?, limit: Int) async throws -> [(id: Int64, entry: AuditEntry)]
}
