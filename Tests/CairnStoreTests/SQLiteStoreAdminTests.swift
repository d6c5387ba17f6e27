// Accounts and the admin role (migration v17-accounts-email-admin), on both engines unless the test is about the
// SQLite store's roles: emails unique among those given and found by login, the admin role beside ops, the user list
// (prefix of username or email, keyset pages in username order, guests only when asked, real figures), suspensions
// in force or run out, and the audit line that each suspension and lifting writes in the same transaction.
import CairnAdmin
import CairnBuckets
import CairnCore
import CairnSQL
import CairnSessions
import CairnTrackers
import Foundation
import Testing

@testable import CairnStore

@Suite(.timeLimit(.minutes(5)))
struct SQLiteStoreAdminTests {
    func newUser(
        _ store: any EngineStore, _ name: String, email: String? = nil, guest: Bool = false
    ) async throws -> User {
        try await store.createUser(
            NewUser(username: name, name: name, passwordHash: nil, isGuest: guest, createdAt: 1, email: email))
    }

    func withStore(_ body: (SQLiteStore) async throws -> Void) async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SQLiteStore(directory: dir)
        try await body(store)
        try store.close()
    }

    @Test(arguments: StoreEngine.available)
    func emailsAreUniqueWhenGivenAndFoundByLogin(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            let alice = try await newUser(store, "alice", email: "alice@example.org")
            await #expect(throws: AccountStoreError.emailTaken) {
                _ = try await newUser(store, "bob", email: "alice@example.org")
            }
            await #expect(throws: AccountStoreError.usernameTaken) {
                _ = try await newUser(store, "alice", email: "other@example.org")
            }
            _ = try await newUser(store, "carol")
            _ = try await newUser(store, "dave")
            #expect(try await store.credentials(email: "alice@example.org")?.user == alice)
            #expect(try await store.credentials(email: "nobody@example.org") == nil)
        }
    }

    @Test func theAdminRoleIsItsOwn() async throws {
        try await withStore { store in
            let alice = try await newUser(store, "alice")
            #expect(try store.grantRole(.admin, username: "alice", at: 1))
            #expect(try await store.hasRole(.admin, userID: alice.id))
            #expect(try await store.hasRole(.ops, userID: alice.id) == false)
            #expect(try store.usernames(withRole: .admin) == ["alice"])
            #expect(try await store.adminUser(id: alice.id, now: 1)?.isAdmin == true)
            #expect(try store.revokeRole(.admin, username: "alice"))
            #expect(try await store.adminUser(id: alice.id, now: 1)?.isAdmin == false)
        }
    }

    @Test(arguments: StoreEngine.available)
    func usersArePagedByUsernameAndSearchedByPrefix(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            for name in ["anna", "andy", "bob", "amir", "a_b", "Zoe", "B_upper"] {
                _ = try await newUser(store, name, email: "\(name)@example.org")
            }
            _ = try await newUser(store, "zed", email: "andrea@example.org")
            _ = try await newUser(store, "guest-1", guest: true)
            func names(_ q: AdminUserQuery) async throws -> [String] {
                try await store.adminUsers(q, now: 1).map(\.user.username)
            }
            #expect(
                try await names(.init(prefix: "an", after: nil, guests: false, limit: 10)) == ["andy", "anna", "zed"])
            #expect(try await names(.init(prefix: "an", after: "andy", guests: false, limit: 1)) == ["anna"])
            // LIKE's own characters are literal.
            #expect(try await names(.init(prefix: "a_", after: nil, guests: false, limit: 10)) == ["a_b"])
            // The prefix ignores case, as SQLite's LIKE does.
            #expect(try await names(.init(prefix: "ZO", after: nil, guests: false, limit: 10)) == ["Zoe"])
            #expect(try await names(.init(prefix: nil, after: nil, guests: false, limit: 10)).count == 8)
            #expect(try await names(.init(prefix: nil, after: nil, guests: true, limit: 10)).count == 9)
            // Byte order: capitals before small letters, "_" between them.
            #expect(
                try await names(.init(prefix: nil, after: nil, guests: false, limit: 10))
                    == ["B_upper", "Zoe", "a_b", "amir", "andy", "anna", "bob", "zed"])
            #expect(try await names(.init(prefix: nil, after: "bob", guests: true, limit: 10)) == ["guest-1", "zed"])
        }
    }

    @Test(arguments: StoreEngine.available)
    func theFiguresCountFriendsOwnedBucketsRelicsAndPictures(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            let alice = try await newUser(store, "alice")
            let bob = try await newUser(store, "bob")
            let carol = try await newUser(store, "carol")
            // Rows of ports other than this one's, written directly.
            for other in [bob.id, carol.id] {
                try await store.execute(
                    "INSERT INTO friendships (user_a, user_b, created_at) VALUES (?, ?, 1)", [alice.id, other])
            }
            try await store.execute(
                "INSERT INTO user_roles (user_id, role, granted_at) VALUES (?, 'admin', 1)", [alice.id])
            try await store.execute(
                "INSERT INTO relics (creator_id, lat, lon, radius, text, created_at) VALUES (?, 0, 0, 10, 't', 1)",
                [alice.id])
            for likes: Int64 in [3, 4] {
                try await store.execute(
                    "INSERT INTO pictures (by_id, media_id, likes, created_at) VALUES (?, 'm', ?, 1)",
                    [alice.id, likes])
            }
            let pictures = try await store.int64s("SELECT id FROM pictures ORDER BY id")
            for (picture, reporter, state) in [(pictures[0], bob.id, "open"), (pictures[1], bob.id, "resolved")] {
                try await store.execute(
                    """
                    INSERT INTO picture_reports (picture_id, reporter_id, reporter_guest, reason, created_at, state)
                    VALUES (?, ?, false, 'spam', 1, '\(state)')
                    """, [picture, reporter])
            }
            let bucket = try await store.createBucket(name: "b", privacy: .private, owner: alice.id, at: 1)
            _ = try await store.setMember(bucket: bucket.id, user: bob.id, role: .viewer)
            let row = try #require(try await store.adminUser(id: alice.id, now: 1))
            #expect((row.friends, row.buckets, row.relics) == (2, 1, 1))
            #expect((row.pictures, row.likesReceived, row.openReports) == (2, 7, 1))
            #expect(row.isAdmin)
            let other = try #require(try await store.adminUser(id: bob.id, now: 1))
            #expect((other.friends, other.buckets, other.relics) == (1, 0, 0))
            #expect((other.pictures, other.likesReceived, other.openReports, other.isAdmin) == (0, 0, 0, false))
            #expect(try await store.adminUser(id: 999, now: 1) == nil)
        }
    }

    @Test(arguments: StoreEngine.available)
    func aSuspensionHoldsUntilItRunsOutOrIsLiftedAndEachIsAudited(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            let root = try await newUser(store, "root")
            let eve = try await newUser(store, "eve")
            let audit = AuditEntry(
                at: 100, admin: root, action: "user.suspend", targetKind: "user", targetID: eve.id, targetName: "eve",
                reason: "spam", detail: "until=200")
            try await store.suspend(userID: eve.id, Suspension(reason: "spam", since: 100, until: 200), audit: audit)
            #expect(
                try await store.suspension(userID: eve.id, now: 150)
                    == Suspension(reason: "spam", since: 100, until: 200))
            #expect(try await store.suspension(userID: eve.id, now: 200) == nil)
            #expect(try await store.adminUser(id: eve.id, now: 150)?.suspension?.reason == "spam")
            #expect(try await store.adminUser(id: eve.id, now: 250)?.suspension == nil)
            // Replaced by one until lifted, then lifted.
            try await store.suspend(userID: eve.id, Suspension(reason: "again", since: 300, until: nil), audit: audit)
            #expect(try await store.suspension(userID: eve.id, now: Int64.max - 1)?.reason == "again")
            var lift = audit
            lift.action = "user.unsuspend"
            #expect(try await store.unsuspend(userID: eve.id, audit: lift))
            #expect(try await store.unsuspend(userID: eve.id, audit: lift) == false)
            #expect(try await store.suspension(userID: eve.id, now: 400) == nil)
            let log = try await store.auditLog(before: nil, limit: 10)
            #expect(log.map(\.entry.action) == ["user.unsuspend", "user.suspend", "user.suspend"])
            #expect(log.first?.entry.admin.username == "root")
            #expect(log.last?.entry.reason == "spam")
            let older = try await store.auditLog(before: log[0].id, limit: 1)
            #expect(older.map(\.id) == [log[1].id])
        }
    }
}

/// Migration v20-admin-settings, on both engines: settings stored, replaced and deleted with their audit lines in one
/// transaction and read back after reopening; activity counted once per (day, account), its marks kept for two days
/// only; the accounts' daily figures count registrations by UTC day (guests left out) and active accounts; a
/// tracker's owners count as suspended only while every one of them is, and only until a timed suspension runs out.
@Suite(.timeLimit(.minutes(5)))
struct SQLiteStoreAdminSettingsTests {
    @Test(arguments: StoreEngine.available)
    func settingsAreStoredWithTheirAuditAndSurviveReopening(engine: StoreEngine) async throws {
        try await engine.withDatabase { database in
            let store = try database.open()
            let root = try await SQLiteStoreAdminTests().newUser(store, "root")
            func line(_ key: String, _ detail: String) -> AuditEntry {
                AuditEntry(
                    at: 5, admin: root, action: "setting.set", targetKind: "setting", targetID: 0, targetName: key,
                    reason: nil, detail: detail)
            }
            try await store.saveAdminSettings(
                set: ["a": "1", "b": "true", "c": "x"], reset: [],
                audit: [line("a", "0 → 1"), line("b", "false → true")])
            try await store.saveAdminSettings(set: ["a": "2"], reset: ["b", "c"], audit: [line("a", "1 → 2")])
            #expect(try await store.adminSettings() == ["a": "2"])
            let audit = try await store.auditLog(before: nil, limit: 10)
            #expect(audit.map(\.entry.detail) == ["1 → 2", "false → true", "0 → 1"])
            #expect(audit.map(\.entry.targetName) == ["a", "b", "a"])
            database.close(store)
            let reopened = try database.open()
            #expect(try reopened.loadAdminSettingsNow() == ["a": "2"])
        }
    }

    @Test(arguments: StoreEngine.available)
    func theAccountsDailyFiguresCountRegistrationsAndActivity(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            let day: Int64 = 20_000
            let ms = day * DailyStatsRange.dayMs
            for (name, at, guest) in [("a", ms - 1, false), ("b", ms, false), ("c", ms + 5, false), ("g", ms, true)] {
                _ = try await store.createUser(
                    NewUser(username: name, name: name, passwordHash: nil, isGuest: guest, createdAt: at))
            }
            try await store.recordActivity([day - 1: [1], day: [1, 2]])
            try await store.recordActivity([day: [2, 3, 3]])  // again: counted once
            let stats = store.accountDailyStats
            #expect(stats.columns == [.newUsers, .activeUsers])
            let figures = try await stats.dailyStats(DailyStatsRange(firstDay: day - 1, days: 3))
            #expect(figures[.newUsers] == [1, 2, 0])
            #expect(figures[.activeUsers] == [1, 3, 0])
            // Two days on, the marks of the older days are deleted; their counts stay.
            try await store.recordActivity([day + 2: [1]])
            #expect(try await store.int64s("SELECT DISTINCT day FROM activity") == [day + 2])
            let later = try await stats.dailyStats(DailyStatsRange(firstDay: day - 1, days: 4))
            #expect(later[.activeUsers] == [1, 3, 0, 1])
        }
    }

    @Test(arguments: StoreEngine.available)
    func aTrackersOwnersAreSuspendedOnlyWhileEveryOneIs(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            let admins = SQLiteStoreAdminTests()
            let root = try await admins.newUser(store, "root")
            let alice = try await admins.newUser(store, "alice")
            let bob = try await admins.newUser(store, "bob")
            let bucket = try await store.createBucket(
                name: "Gear", privacy: .private, owner: alice.id, at: 1, limit: 10)
            let item = try await store.createItem(
                bucket: bucket.id, name: "Bike", note: nil, photo: nil, at: 2, limit: 10)
            _ = try await store.pairTracker(item: item.id, device: "dev-1", keyDigest: [1], at: 3)
            func suspended(_ now: Int64) async throws -> (Bool, Bool?) {
                (
                    try await store.trackerOwnersSuspended(item: item.id, now: now),
                    try await store.trackerIngestState(keyDigest: [1], now: now)?.ownersSuspended
                )
            }
            func audit(_ target: User) -> AuditEntry {
                AuditEntry(
                    at: 1, admin: root, action: "user.suspend", targetKind: "user", targetID: target.id,
                    targetName: nil, reason: "x", detail: nil)
            }
            #expect(try await suspended(100) == (false, false))
            try await store.suspend(
                userID: alice.id, Suspension(reason: "x", since: 1, until: 1_000), audit: audit(alice))
            #expect(try await suspended(100) == (true, true))
            #expect(try await suspended(1_000) == (false, false))  // ran out
            _ = try await store.setMember(bucket: bucket.id, user: bob.id, role: .owner)
            #expect(try await suspended(100) == (false, false))  // a co-owner in good standing
            try await store.suspend(userID: bob.id, Suspension(reason: "x", since: 1, until: nil), audit: audit(bob))
            #expect(try await suspended(100) == (true, true))
        }
    }
}
