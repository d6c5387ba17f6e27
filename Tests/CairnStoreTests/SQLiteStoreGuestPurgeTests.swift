import CairnBuckets
import CairnChat
import CairnCore
// Inactive guests are purged with everything that is theirs: a guest last seen before the cutoff goes with its rows
// in every table that names a user, while a member, a guest seen since and a guest the hub spares (connected) stay
// with theirs. `markSeen` only moves the last activity forward. On both engines, but buckets on SQLite only until
// the PostgreSQL store has its BucketStore.
import CairnRelics
import CairnSQL
import CairnSessions
import CairnSocial
import Foundation
import GRDB
import Testing

@testable import CairnStore

@Suite(.timeLimit(.minutes(5)))
struct SQLiteStoreGuestPurgeTests {
    /// Every table column that names a user.
    static let userColumns: [(table: String, column: String)] = [
        ("tokens", "user_id"), ("friendships", "user_a"), ("friendships", "user_b"), ("friend_requests", "from_id"),
        ("friend_requests", "to_id"), ("share_rules", "owner_id"), ("share_rules", "viewer_id"),
        ("positions", "user_id"), ("position_history", "user_id"), ("relics", "creator_id"),
        ("chat_messages", "user_a"), ("chat_messages", "user_b"), ("chat_reads", "reader_id"),
        ("chat_reads", "peer_id"), ("media", "owner_id"), ("user_roles", "user_id"),
    ]

    /// Rows naming `user` across every table.
    func rows(of user: Int64, in store: any EngineStore) async throws -> Int64 {
        var sum: Int64 = 0
        for place in Self.userColumns {
            sum +=
                try await store.sqlInteger(
                    "SELECT count(*) FROM \(place.table) WHERE \(place.column) = ?", .int(user)) ?? 0
        }
        return sum
    }

    /// Gives `user` a row in every table, with `peer` on the other side where a table pairs users.
    func fill(_ store: any EngineStore, _ user: Int64, peer: Int64) async throws -> Int64 {
        let media = String(repeating: String(format: "%02x", user), count: 32)
        let (a, b) = (min(user, peer), max(user, peer))
        try await store.insertToken(hash: [UInt8(user)], userID: user, createdAt: 1)
        try await store.sqlExecute(
            "INSERT INTO friendships (user_a, user_b, created_at) VALUES (?, ?, 1)", .int(a), .int(b))
        try await store.sqlExecute(
            "INSERT INTO friend_requests (from_id, to_id, created_at) VALUES (?, ?, 1), (?, ?, 1)",
            .int(user), .int(peer), .int(peer), .int(user))
        try await store.sqlExecute(
            "INSERT INTO share_rules (owner_id, viewer_id, level) VALUES (?, ?, 'hidden'), (?, ?, 'hidden')",
            .int(user), .int(peer), .int(peer), .int(user))
        try await store.sqlExecute("INSERT INTO positions (user_id, lat, lon, ts) VALUES (?, 1, 2, 3)", .int(user))
        try await store.sqlExecute(
            "INSERT INTO position_history (user_id, lat, lon, ts) VALUES (?, 1, 2, 3)", .int(user))
        try await store.sqlExecute(
            "INSERT INTO media (id, owner_id, content_type, size, created_at) VALUES (?, ?, 'image/png', 3, 1)",
            .text(media), .int(user))
        try await store.sqlExecute(
            "INSERT INTO user_roles (user_id, role, granted_at) VALUES (?, 'ops', 1)", .int(user))
        _ = try await store.saveMessage(from: user, to: peer, text: "hi", at: 1)
        _ = try await store.saveMessage(from: peer, to: user, text: "hi", at: 2)
        _ = try await store.markRead(reader: user, peer: peer, upto: .max)
        _ = try await store.markRead(reader: peer, peer: user, upto: .max)
        return try await store.createRelic(
            NewRelic(
                creatorID: user, lat: 1, lon: 2, radius: 50, text: "t",
                mediaID: media, passwordHash: nil, createdAt: 1, expiresAt: nil))
    }

    @Test(arguments: StoreEngine.available)
    func inactiveGuestsGoWithEverythingTheirsOthersStay(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            func make(_ name: String, guest: Bool) async throws -> Int64 {
                try await store.createUser(
                    NewUser(
                        username: name, name: name, passwordHash: guest ? nil : "x",
                        isGuest: guest, createdAt: 100)
                ).id
            }
            let member = try await make("member", guest: false)
            let stale = try await make("guest_stale", guest: true)
            let recent = try await make("guest_recent", guest: true)
            let connected = try await make("guest_connected", guest: true)
            let otherMember = try await make("other", guest: false)
            let staleRelic = try await fill(store, stale, peer: member)
            let recentRelic = try await fill(store, recent, peer: otherMember)
            let connectedRelic = try await fill(store, connected, peer: otherMember)
            let memberRelic = try await fill(store, member, peer: otherMember)
            try await store.markSeen(userIDs: [recent], at: 5_000)
            try await store.markSeen(userIDs: [recent], at: 10)  // never backwards

            let purge = try await store.purgeGuests(seenBefore: 1_000, sparing: [connected])
            #expect(purge == GuestPurge(users: [stale], relics: [staleRelic]))
            #expect(try await rows(of: stale, in: store) == 0)
            #expect(try await store.user(id: stale) == nil)
            for user in [member, recent, connected, otherMember] { #expect(try await store.user(id: user) != nil) }
            for relic in [recentRelic, connectedRelic, memberRelic] {
                #expect(try await store.relic(id: relic) != nil)
            }
            #expect(try await rows(of: recent, in: store) == 15)
            #expect(try await rows(of: connected, in: store) == 15)
            // The member kept their own rows; only what paired them with the purged guest went.
            #expect(try await rows(of: member, in: store) == 15)
            #expect(try await store.purgeGuests(seenBefore: 1_000, sparing: [connected]) == GuestPurge())
            // Past the recent guest's activity, and no longer spared, both go; the member never does.
            let later = try await store.purgeGuests(seenBefore: 6_000, sparing: [])
            #expect(later.users == [recent, connected] && Set(later.relics) == [recentRelic, connectedRelic])
            #expect(try await store.user(id: member) != nil)
        }
    }

    @Test func bucketsThatLoseEveryOwnerGoWithTheirItemsAndAreReported() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SQLiteStore(directory: dir)
        defer { try? store.close() }
        func make(_ name: String, guest: Bool) async throws -> Int64 {
            try await store.createUser(
                NewUser(
                    username: name, name: name, passwordHash: guest ? nil : "x", isGuest: guest, createdAt: 100)
            ).id
        }
        let guest = try await make("guest_a", guest: true)
        let member = try await make("member", guest: false)
        let alone = try await store.createBucket(name: "Mine", privacy: .private, owner: guest, at: 1, limit: 10)
        let shared = try await store.createBucket(name: "Ours", privacy: .private, owner: guest, at: 1, limit: 10)
        _ = try await store.setMember(bucket: shared.id, user: member, role: .owner)
        let lost = try await store.createItem(bucket: alone.id, name: "Keys", note: nil, photo: nil, at: 2, limit: 10)
        let kept = try await store.createItem(bucket: shared.id, name: "Bike", note: nil, photo: nil, at: 2, limit: 10)
        let purge = try await store.purgeGuests(seenBefore: 1_000, sparing: [])
        #expect(purge.users == [guest] && purge.items == [lost.id])
        #expect(try await store.item(id: lost.id) == nil)
        #expect(try await store.item(id: kept.id) != nil)
    }

    @Test(arguments: StoreEngine.available)
    func manyGuestsArePurgedInBatchesPastSparedOnes(engine: StoreEngine) async throws {
        try await engine.withStore { store in
            let users = try await store.createUsers(
                (0..<1_200).map {
                    NewUser(username: "g\($0)", name: "Guest", passwordHash: nil, isGuest: true, createdAt: 1)
                })
            let spared = Set(users.prefix(600).map(\.id))  // a whole batch and more spared: the purge still moves on
            let purge = try await store.purgeGuests(seenBefore: 2, sparing: spared)
            #expect(purge.users.count == 600 && Set(purge.users).isDisjoint(with: spared))
            #expect(try await store.sqlInteger("SELECT count(*) FROM users") == 600)
        }
    }
}
