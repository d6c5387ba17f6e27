import CairnChat
// The relic and chat tables: a relic's media must be its creator's upload, live relics load without the expired,
// the creator's list pages newest first, deletion and the retention purge; chat pages oldest-first within the newest
// `limit`, conversations list the latest message and unread counts, and read marks only move forward. Everything
// written is read back from a reopened store, as after a restart. On both engines.
import CairnCore
import CairnRelics
import CairnSessions
import Foundation
import Testing

@Suite(.timeLimit(.minutes(5)))
struct SQLiteStoreRelicChatTests {
    /// Runs `body` on a fresh store with three users, and the way to open the same data again (`body` closes the
    /// store itself when it reopens it).
    func withStore(
        _ engine: StoreEngine,
        _ body: (any EngineStore, [User], @escaping () throws -> any EngineStore) async throws -> Void
    ) async throws {
        try await engine.withReopening { open in
            let store = try open()
            var users: [User] = []
            for name in ["anna", "bob", "cleo"] {
                users.append(
                    try await store.createUser(
                        NewUser(
                            username: name, name: name, passwordHash: nil,
                            isGuest: false, createdAt: 1)))
            }
            try await body(store, users, open)
        }
    }

    func relic(_ creator: Int64, expires: Int64? = nil, media: String? = nil, text: String = "t") -> NewRelic {
        NewRelic(
            creatorID: creator, lat: 48.85, lon: 2.35, radius: 50, text: text, mediaID: media,
            passwordHash: nil, createdAt: 100, expiresAt: expires)
    }

    @Test(arguments: StoreEngine.available)
    func relicsRoundTripAndRespectMediaOwnership(engine: StoreEngine) async throws {
        try await withStore(engine) { store, u, open in
            let media = String(repeating: "0f", count: 32)
            try await store.sqlExecute(
                "INSERT INTO media (id, owner_id, content_type, size, created_at) VALUES (?, ?, 'image/png', 3, 1)",
                .text(media), .int(u[1].id))
            await #expect(throws: RelicStoreError.mediaNotFound) {
                _ = try await store.createRelic(relic(u[0].id, media: media))
            }
            let withMedia = try await store.createRelic(relic(u[1].id, media: media))
            var locked = relic(u[0].id, expires: 1_000, text: "secret")
            locked.passwordHash = "scrypt$x"
            let expiring = try await store.createRelic(locked)
            let permanent = try await store.createRelic(relic(u[0].id))
            let stored = try #require(try await store.relic(id: expiring))
            #expect(stored.text == "secret" && stored.marker.locked && stored.passwordHash == "scrypt$x")
            #expect(stored.marker.expiresAt == 1_000)
            #expect(try await store.relic(id: withMedia)?.mediaID == media)
            #expect(Set(try store.loadLiveRelics(now: 999).map(\.id)) == [withMedia, expiring, permanent])
            #expect(Set(try store.loadLiveRelics(now: 1_000).map(\.id)) == [withMedia, permanent])
            let mine = try await store.relics(creator: u[0].id, before: nil, limit: 10)
            #expect(mine.map(\.marker.id) == [permanent, expiring])
            #expect(
                try await store.relics(creator: u[0].id, before: permanent, limit: 10).map(\.marker.id) == [expiring])
            // Reopened, as after a restart.
            store.closeForTest()
            let reopened = try open()
            #expect(try await reopened.relic(id: expiring) == stored)
            #expect(try await reopened.purgeExpiredRelics(expiredBefore: 1_000) == 0)
            #expect(try await reopened.purgeExpiredRelics(expiredBefore: 1_001) == 1)
            #expect(try await reopened.relic(id: expiring) == nil)
            #expect(try await reopened.deleteRelic(id: permanent))
            #expect(!(try await reopened.deleteRelic(id: permanent)))
        }
    }

    @Test(arguments: StoreEngine.available)
    func aRelicWithAHiddenCreatorStaysSoAfterARestart(engine: StoreEngine) async throws {
        try await withStore(engine) { store, u, open in
            var hidden = relic(u[0].id)
            hidden.creatorHidden = true
            let id = try await store.createRelic(hidden)
            let named = try await store.createRelic(relic(u[0].id))
            #expect(try await store.relic(id: id)?.marker.creatorHidden == true)
            store.closeForTest()
            let reopened = try open()
            let live = try reopened.loadLiveRelics(now: 0)
            #expect(live.first { $0.id == id }?.creatorHidden == true)
            #expect(live.first { $0.id == named }?.creatorHidden == false)
        }
    }

    @Test(arguments: StoreEngine.available)
    func chatPagesCountsAndReadMarks(engine: StoreEngine) async throws {
        try await withStore(engine) { store, u, _ in
            let a = u[0].id
            let b = u[1].id
            let c = u[2].id
            var sent: [ChatMessage] = []
            for n in 0..<5 {
                sent.append(
                    try await store.saveMessage(
                        from: n % 2 == 0 ? a : b, to: n % 2 == 0 ? b : a, text: "m\(n)", at: Int64(n)))
            }
            _ = try await store.saveMessage(from: c, to: a, text: "from cleo", at: 9)
            #expect(sent.map(\.id) == sent.map(\.id).sorted())
            let page = try await store.history(of: b, with: a, before: nil, limit: 2)
            #expect(page.map(\.text) == ["m3", "m4"])
            #expect(page[0].from == b && page[0].to == a)
            #expect(try await store.history(of: a, with: b, before: sent[3].id, limit: 2).map(\.text) == ["m1", "m2"])
            let conversations = try await store.conversations(of: a, limit: 10)
            #expect(conversations.map(\.peer) == [c, b])
            #expect(conversations.map(\.unread) == [1, 2])
            #expect(conversations[1].last == sent[4])
            #expect(
                try await store.markRead(reader: a, peer: b, upto: sent[1].id).map { [$0.upto, Int64($0.unread)] } == [
                    sent[1].id, 1,
                ])
            #expect(
                try await store.markRead(reader: a, peer: b, upto: 1).map { [$0.upto, Int64($0.unread)] } == [
                    sent[1].id, 1,
                ],
                "a mark never moves back")
            // Past the newest message from b: the mark stops at it, so later messages arrive unread.
            #expect(
                try await store.markRead(reader: a, peer: b, upto: 1 << 50).map { [$0.upto, Int64($0.unread)] } == [
                    sent[3].id, 0,
                ])
            _ = try await store.saveMessage(from: b, to: a, text: "later", at: 10)
            #expect(try await store.conversations(of: a, limit: 10).first { $0.peer == b }?.unread == 1)
            #expect(try await store.markRead(reader: b, peer: c, upto: 5) == nil, "cleo never wrote to bob")
            #expect(try await store.conversations(of: b, limit: 10).map(\.unread) == [3])
        }
    }
}
