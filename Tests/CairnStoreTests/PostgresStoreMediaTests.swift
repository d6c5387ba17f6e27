import CairnCore
// Media shared by several nodes (PostgreSQL only): an upload accepted by one node is served by another from its own
// cache, a copy that is missing or cut short is fetched again, a collection on one node removes the bytes for every
// node (each drops its copy at its next collection, and none serves the media meanwhile), and the cache directory
// is private. Two `PostgresStore`s on one database with caches of their own stand for two nodes.
import CairnCrypto
import CairnMedia
import CairnSQL
import CairnSessions
import CairnTestSupport
import Foundation
import Testing

@testable import CairnPostgres

@Suite(.enabled(if: PostgresServerProcess.isAvailable), .timeLimit(.minutes(5)))
struct PostgresStoreMediaTests {
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 7, 8, 9]

    /// Runs `body` with two nodes on one new database.
    func withNodes(_ body: (PostgresStore, PostgresStore, String) async throws -> Void) async throws {
        let dir = temporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let url = try PostgresServerProcess.freshURL()
        let a = try PostgresStore(url: url, connections: 2, mediaCache: dir + "/a")
        defer { a.close() }
        let b = try PostgresStore(url: url, connections: 2, mediaCache: dir + "/b")
        defer { b.close() }
        try await body(a, b, dir)
    }

    func upload(_ store: PostgresStore, _ bytes: [UInt8], at: Int64 = 10) async throws -> String {
        let owner = try await store.createUser(
            NewUser(
                username: "u\(UUID().uuidString.prefix(8))", name: "U", passwordHash: nil, isGuest: true, createdAt: 1))
        return try await store.storeMedia(
            bytes: bytes, owner: owner.id, contentType: "image/png", createdAt: at, quotaBytes: nil)
    }

    @Test func anUploadOnOneNodeIsServedByAnotherFromItsOwnCache() async throws {
        try await withNodes { a, b, dir in
            let id = try await upload(a, Self.png)
            #expect(try await a.media(id: id)?.path == dir + "/a/\(id.prefix(2))/\(id)")
            #expect(!FileManager.default.fileExists(atPath: b.mediaCache.path(for: id)))
            let served = try #require(try await b.media(id: id))
            #expect(
                served
                    == StoredMedia(
                        id: id, contentType: "image/png", size: Self.png.count, path: b.mediaCache.path(for: id)))
            #expect(FileManager.default.contents(atPath: served.path) == Data(Self.png))
            let attributes = try FileManager.default.attributesOfItem(atPath: served.path)
            #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o077 } == 0)
            let root = try FileManager.default.attributesOfItem(atPath: dir + "/b")
            #expect(root[.posixPermissions] as? Int == 0o700)
        }
    }

    @Test func concurrentMissesOfOneIdAllGetTheCopy() async throws {
        try await withNodes { a, b, _ in
            let id = try await upload(a, Self.png + [UInt8](repeating: 5, count: 100_000))
            let paths = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<8 { group.addTask { try await b.media(id: id)?.path } }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            #expect(paths == Array(repeating: b.mediaCache.path(for: id), count: 8))
            #expect(FileManager.default.contents(atPath: b.mediaCache.path(for: id))?.count == Self.png.count + 100_000)
        }
    }

    @Test func aCopyMissingOrCutShortIsFetchedAgain() async throws {
        try await withNodes { a, _, _ in
            let id = try await upload(a, Self.png)
            let path = a.mediaCache.path(for: id)
            try FileManager.default.removeItem(atPath: path)
            #expect(
                FileManager.default.contents(atPath: try #require(try await a.media(id: id)).path) == Data(Self.png))
            try Data(Self.png.prefix(4)).write(to: URL(fileURLWithPath: path))
            #expect(
                FileManager.default.contents(atPath: try #require(try await a.media(id: id)).path) == Data(Self.png))
        }
    }

    @Test func aCollectionOnOneNodeRemovesTheBytesForEveryNode() async throws {
        try await withNodes { a, b, _ in
            let id = try await upload(a, Self.png, at: 10)
            #expect(try await b.media(id: id) != nil)  // B has a copy now
            #expect(try await a.collectGarbageMedia(uploadedBefore: 100) == 1)
            #expect(!FileManager.default.fileExists(atPath: a.mediaCache.path(for: id)))
            #expect(try await b.media(id: id) == nil, "no row names it: B does not serve its copy")
            #expect(try await b.mediaContentRemains(id), "B's copy stays until B collects")
            #expect(try await b.collectGarbageMedia(uploadedBefore: 100) == 0)
            #expect(try await b.mediaContentRemains(id) == false)
            // Uploaded again, through B this time: A serves it.
            let again = try await upload(b, Self.png, at: 200)
            #expect(again == id)
            #expect(
                FileManager.default.contents(atPath: try #require(try await a.media(id: id)).path) == Data(Self.png))
        }
    }

    @Test func anUploadSurvivesTheLossOfItsNodesCache() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let url = try PostgresServerProcess.freshURL()
        let node = try PostgresStore(url: url, connections: 1, mediaCache: dir)
        let id = try await upload(node, Self.png)
        node.close()
        try FileManager.default.removeItem(atPath: dir)
        let restarted = try PostgresStore(url: url, connections: 1, mediaCache: dir)
        defer { restarted.close() }
        let served = try #require(try await restarted.media(id: id))
        #expect(FileManager.default.contents(atPath: served.path) == Data(Self.png))
    }

    @Test func aCacheDirectoryOpenToOthersIsMadePrivate() async throws {
        let dir = temporaryDirectory()
        try FileManager.default.createDirectory(
            atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = try MediaCache(root: dir)
        #expect(try FileManager.default.attributesOfItem(atPath: dir)[.posixPermissions] as? Int == 0o700)
        let file = dir + "/file"
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        #expect(throws: MediaCacheError.self) { _ = try MediaCache(root: file) }
    }
}
