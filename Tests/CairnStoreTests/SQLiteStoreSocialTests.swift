// The live-map tables: friendships and requests, sharing rules, position snapshots and history, search. All but the
// migrations' list run on both engines.
import CairnCore
import CairnSessions
import CairnSocial
import Foundation
import Testing

@testable import CairnStore

@Suite(.timeLimit(.minutes(5)))
struct SQLiteStoreSocialTests {
    func withStore(_ engine: StoreEngine, _ body: (any EngineStore, [User]) async throws -> Void) async throws {
        try await engine.withStore { store in
            var users: [User] = []
            for (name, guest) in [("anna", false), ("annabel", false), ("bob", false), ("guest-1", true)] {
                users.append(
                    try await store.createUser(
                        NewUser(
                            username: name, name: name.capitalized, passwordHash: nil,
                            isGuest: guest, createdAt: 1)))
            }
            try await body(store, users)
        }
    }

    @Test func migrationsIncludeTheLiveMapTables() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SQLiteStore(directory: dir)
        defer { try? store.close() }
        do {
            let applied = try store.appliedMigrations()
            #expect(
                applied == [
                    "v1-accounts", "v2-friends-positions", "v3-share-rule-versions", "v4-media-relics-chat",
                    "v5-roles", "v6-relic-creator-hidden", "v7-position-history-ts", "v8-users-last-seen",
                    "v9-profiles", "v10-buckets", "v11-trackers", "v12-item-privacy-alerts-safe-zones",
                    "v14-tracker-filter-state", "v13-tracker-key-index", "v15-tracker-shows-items",
                    "v17-accounts-email-admin", "v18-places", "v20-admin-settings", "v19-pictures-events",
                    "v21-picture-posts", "v22-tracker-paired-by", "v23-event-pictures-unplaced",
                    "v24-users-name-folded",
                ])
        }
    }

    @Test(arguments: StoreEngine.available)
    func friendshipsAndRequestsRoundTrip(engine: StoreEngine) async throws {
        try await withStore(engine) { store, u in
            try await store.addFriendRequest(from: u[0].id, to: u[1].id, at: 5)
            try await store.addFriendRequest(from: u[0].id, to: u[1].id, at: 6)  // repeat is harmless
            try await store.addFriendRequest(from: u[2].id, to: u[0].id, at: 7)
            var snapshot = try store.loadSocial()
            #expect(snapshot.requests.count == 2)
            try await store.addFriendship(u[1].id, u[0].id, at: 8)
            snapshot = try store.loadSocial()
            #expect(snapshot.friendships.map { [$0.0, $0.1] } == [[u[0].id, u[1].id]])
            #expect(snapshot.requests.map { [$0.from, $0.to] } == [[u[2].id, u[0].id]])
            try await store.saveShareRule(ownerID: u[0].id, viewerID: u[1].id, level: .hidden, until: nil, version: 5)
            try await store.deleteFriendship(u[0].id, u[1].id, versionAB: 7, versionBA: 8)
            // An older rule write finishing after the removal does not bring the rule back.
            try await store.saveShareRule(
                ownerID: u[0].id, viewerID: u[1].id, level: .approximate, until: nil, version: 6)
            let after = try store.loadSocial()
            #expect(after.friendships.isEmpty)
            #expect(after.shareRules.isEmpty)
            #expect(after.maxRuleVersion == 8)
        }
    }

    @Test(arguments: StoreEngine.available)
    func acceptingAWithdrawnRequestFailsAndWritesNothing(engine: StoreEngine) async throws {
        try await withStore(engine) { store, u in
            try await store.addFriendRequest(from: u[0].id, to: u[1].id, at: 5)
            try await store.deleteFriendRequest(from: u[0].id, to: u[1].id)  // withdrawn before the accept commits
            await #expect(throws: SocialStoreError.noFriendRequest(from: u[0].id, to: u[1].id)) {
                try await store.addFriendship(u[1].id, u[0].id, at: 6)
            }
            #expect(try store.loadSocial().friendships.isEmpty)
            // Only the request from the other side counts: one's own request cannot be accepted by oneself.
            try await store.addFriendRequest(from: u[1].id, to: u[0].id, at: 7)
            await #expect(throws: SocialStoreError.noFriendRequest(from: u[0].id, to: u[1].id)) {
                try await store.addFriendship(u[1].id, u[0].id, at: 8)
            }
            try await store.addFriendship(u[0].id, u[1].id, at: 9)
            try await store.addFriendship(u[0].id, u[1].id, at: 10)  // already friends: harmless
            #expect(try store.loadSocial().friendships.count == 1)
        }
    }

    @Test(arguments: StoreEngine.available)
    func shareRulesUpsertAndDelete(engine: StoreEngine) async throws {
        try await withStore(engine) { store, u in
            try await store.saveShareRule(ownerID: u[0].id, viewerID: u[1].id, level: .hidden, until: nil, version: 1)
            try await store.saveShareRule(
                ownerID: u[0].id, viewerID: u[1].id, level: .approximate, until: 99, version: 2)
            try await store.saveShareRule(ownerID: u[0].id, viewerID: nil, level: .hidden, until: nil, version: 3)
            let rules = try store.loadSocial().shareRules.sorted { ($0.viewerID ?? 0) < ($1.viewerID ?? 0) }
            #expect(
                rules == [
                    StoredShareRule(ownerID: u[0].id, viewerID: nil, level: .hidden, until: nil, version: 3),
                    StoredShareRule(ownerID: u[0].id, viewerID: u[1].id, level: .approximate, until: 99, version: 2),
                ])
            try await store.saveShareRule(ownerID: u[0].id, viewerID: nil, level: nil, until: nil, version: 4)
            let after = try store.loadSocial()
            #expect(after.shareRules.count == 1)
            #expect(after.maxRuleVersion == 4)  // the tombstone keeps its version
            // Cleared rules come back apart, with their versions: a node knows a hide cleared after what it holds.
            #expect(
                after.clearedRules
                    == [StoredShareRule(ownerID: u[0].id, viewerID: nil, level: .precise, until: nil, version: 4)])
            // The read made while serving sees the same, in one transaction, without positions.
            let sharing = try await store.loadSharing()
            #expect(sharing.clearedRules == after.clearedRules && sharing.shareRules == after.shareRules)
            #expect(sharing.positions.isEmpty)
        }
    }

    @Test(arguments: StoreEngine.available)
    func anOlderRuleWriteFinishingLateDoesNotOverwriteANewerOne(engine: StoreEngine) async throws {
        try await withStore(engine) { store, u in
            try await store.saveShareRule(ownerID: u[0].id, viewerID: u[1].id, level: .hidden, until: nil, version: 20)
            try await store.saveShareRule(ownerID: u[0].id, viewerID: u[1].id, level: nil, until: nil, version: 10)
            let rules = try store.loadSocial().shareRules
            #expect(rules.map(\.level) == [.hidden])
        }
    }

    @Test(arguments: StoreEngine.available)
    func positionFlushKeepsTheNewestAndAppendsHistory(engine: StoreEngine) async throws {
        try await withStore(engine) { store, u in
            var batch = PositionBatch()
            batch.latest = [
                StoredFix(userID: u[0].id, fix: Fix(lat: 1, lon: 2, acc: 3, bat: 50, ts: 100)),
                StoredFix(userID: u[1].id, fix: Fix(lat: 5, lon: 6, ts: 100, flagged: true)),
            ]
            try await store.flushPositions(batch)
            batch = PositionBatch()
            // An older fix must not overwrite a newer one even if it reaches the store later.
            batch.latest = [StoredFix(userID: u[0].id, fix: Fix(lat: 9, lon: 9, ts: 50))]
            batch.history = [StoredFix(userID: u[0].id, fix: Fix(lat: 8, lon: 8, ts: 40))]
            try await store.flushPositions(batch)
            let positions = try store.loadSocial().positions.sorted { $0.userID < $1.userID }
            #expect(
                positions.map(\.fix) == [
                    Fix(lat: 1, lon: 2, acc: 3, bat: 50, ts: 100), Fix(lat: 5, lon: 6, ts: 100, flagged: true),
                ])
            #expect(try await store.sqlInteger("SELECT count(*) FROM position_history") == 1)
        }
    }

    @Test(arguments: StoreEngine.available)
    func aFixOfADeletedUserIsSkippedWithoutFailingTheSnapshot(engine: StoreEngine) async throws {
        try await withStore(engine) { store, u in
            var batch = PositionBatch()
            batch.latest = [
                StoredFix(userID: 999_999, fix: Fix(lat: 1, lon: 1, ts: 10)),
                StoredFix(userID: u[0].id, fix: Fix(lat: 2, lon: 2, ts: 10)),
            ]
            batch.history = [
                StoredFix(userID: 999_999, fix: Fix(lat: 3, lon: 3, ts: 5)),
                StoredFix(userID: u[0].id, fix: Fix(lat: 4, lon: 4, ts: 5)),
            ]
            try await store.flushPositions(batch)
            #expect(try store.loadSocial().positions.map(\.userID) == [u[0].id])
            #expect(try await store.sqlInteger("SELECT count(*) FROM position_history") == 1)
        }
    }

    @Test(arguments: StoreEngine.available)
    func positionHistoryIsPurgedByAge(engine: StoreEngine) async throws {
        try await withStore(engine) { store, u in
            var batch = PositionBatch()
            batch.history = (0..<25_000).map { i in
                StoredFix(userID: u[i % 3].id, fix: Fix(lat: 1, lon: 1, ts: Int64(i)))
            }
            try await store.flushPositions(batch)
            #expect(try await store.purgePositionHistory(before: 20_000) == 20_000)  // more than one slice
            #expect(try await store.sqlInteger("SELECT min(ts) FROM position_history") == 20_000)
            #expect(try await store.purgePositionHistory(before: 20_000) == 0)
        }
    }

    @Test(arguments: StoreEngine.available)
    func bigFlushIsOneTransaction(engine: StoreEngine) async throws {
        try await withStore(engine) { store, u in
            var batch = PositionBatch()
            batch.latest = (0..<20_000).map { i in
                StoredFix(userID: u[i % 3].id, fix: Fix(lat: 1, lon: 1, ts: Int64(i)))
            }
            try await store.flushPositions(batch)
            #expect(try store.loadSocial().positions.count == 3)
        }
    }

    @Test(arguments: StoreEngine.available)
    func searchIsPrefixCaseInsensitiveAndSkipsGuestsAndSelf(engine: StoreEngine) async throws {
        try await withStore(engine) { store, u in
            let ann = try await store.searchUsers(prefix: "ANN", excluding: u[0].id, limit: 20)
            #expect(ann.map(\.username) == ["annabel"])
            let guests = try await store.searchUsers(prefix: "guest", excluding: 0, limit: 20)
            #expect(guests.isEmpty)
            let wildcard = try await store.searchUsers(prefix: "%", excluding: 0, limit: 20)
            #expect(wildcard.isEmpty)
            let byName = try await store.searchUsers(prefix: "b", excluding: 0, limit: 20)
            #expect(byName.map(\.name) == ["Bob"])
            let byID = try await store.users(ids: [u[2].id, u[0].id, 999])
            #expect(byID.map(\.username) == ["anna", "bob"])
            // A wildcard followed by a combining mark is one Character with it, and still a literal: "b_\u{301}"
            // must not find "Bo\u{301}b" (nor "an%" with its mark anyone whose name starts with "an").
            _ = try await store.createUser(
                NewUser(username: "bob2", name: "Bo\u{301}b", passwordHash: nil, isGuest: false, createdAt: 1))
            #expect(try await store.searchUsers(prefix: "b_\u{301}", excluding: 0, limit: 20).isEmpty)
            #expect(try await store.searchUsers(prefix: "an%\u{301}", excluding: 0, limit: 20).isEmpty)
            #expect(
                try await store.searchUsers(prefix: "bo\u{301}", excluding: 0, limit: 20).map(\.username) == ["bob2"])
        }
    }

    @Test(arguments: StoreEngine.available)
    func aBatchNamingAUserTwiceKeepsTheLastOfTheNewest(engine: StoreEngine) async throws {
        try await withStore(engine) { store, u in
            var batch = PositionBatch()
            batch.latest = [
                StoredFix(userID: u[0].id, fix: Fix(lat: 1, lon: 1, ts: 100)),
                StoredFix(userID: u[1].id, fix: Fix(lat: 7, lon: 7, ts: 5)),
                StoredFix(userID: u[0].id, fix: Fix(lat: 2, lon: 2, ts: 100)),
                StoredFix(userID: u[0].id, fix: Fix(lat: 3, lon: 3, ts: 90)),
            ]
            try await store.flushPositions(batch)
            let positions = try store.loadSocial().positions.sorted { $0.userID < $1.userID }
            #expect(positions.map(\.fix) == [Fix(lat: 2, lon: 2, ts: 100), Fix(lat: 7, lon: 7, ts: 5)])
        }
    }

    @Test(arguments: StoreEngine.available)
    func flushesFromTwoProcessesAtOnceKeepTheNewest(engine: StoreEngine) async throws {
        try await engine.withReopening { open in
            let a = try open()
            let b = try open()
            var users: [Int64] = []
            for n in 0..<20 {
                users.append(
                    try await a.createUser(
                        NewUser(username: "u\(n)", name: "U", passwordHash: nil, isGuest: false, createdAt: 1)
                    ).id)
            }
            func batch(_ ts: Int64, lat: Double, reversed: Bool) -> PositionBatch {
                var batch = PositionBatch()
                let order = reversed ? users.reversed() : users
                batch.latest = order.map { StoredFix(userID: $0, fix: Fix(lat: lat, lon: 0, ts: ts)) }
                batch.history = batch.latest
                return batch
            }
            for round in Int64(0)..<10 {
                let older = batch(2 * round, lat: 1, reversed: false)
                let newer = batch(2 * round + 1, lat: 2, reversed: true)
                async let first: Void = a.flushPositions(older)
                async let second: Void = b.flushPositions(newer)
                _ = try await (first, second)
            }
            let positions = try a.loadSocial().positions
            #expect(positions.count == 20)
            #expect(positions.allSatisfy { $0.fix == Fix(lat: 2, lon: 0, ts: 19) })
            #expect(try await b.sqlInteger("SELECT count(*) FROM position_history") == 400)
        }
    }

    @Test(arguments: StoreEngine.available)
    func anAcceptRacingAWithdrawalElsewhereNeverMakesFriendsWithoutTheRequest(engine: StoreEngine) async throws {
        try await engine.withReopening { open in
            let a = try open()
            let b = try open()
            var pairs: [(Int64, Int64)] = []
            for n in 0..<15 {
                let from = try await a.createUser(
                    NewUser(username: "f\(n)", name: "F", passwordHash: nil, isGuest: false, createdAt: 1))
                let to = try await a.createUser(
                    NewUser(username: "t\(n)", name: "T", passwordHash: nil, isGuest: false, createdAt: 1))
                pairs.append((from.id, to.id))
            }
            var accepted = 0
            for (from, to) in pairs {
                try await a.addFriendRequest(from: from, to: to, at: 1)
                async let withdraw: Void = a.deleteFriendRequest(from: from, to: to)
                async let accept: Bool = {
                    do {
                        try await b.addFriendship(to, from, at: 2)
                        return true
                    } catch SocialStoreError.noFriendRequest {
                        return false
                    }
                }()
                let (_, made) = try await (withdraw, accept)
                if made { accepted += 1 }
                let friends = try a.loadSocial().friendships.contains { $0 == (min(from, to), max(from, to)) }
                #expect(friends == made)
            }
            #expect(try a.loadSocial().requests.isEmpty)
            #expect(try a.loadSocial().friendships.count == accepted)
        }
    }
}
