// The media feature's rules, over an in-memory store: who may upload, what may be uploaded, what a signed URL may
// fetch, and collection; every refusal is the matching typed `MediaError`, and a refused upload stores nothing.
import CairnCore
import CairnCrypto
import CairnMedia
import CairnSessions
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(5)))
struct MediaLibraryTests {
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array("not really a picture".utf8)
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3]

    let media = MemoryMediaStore()
    let tokens = TokenAccountStore()
    let clock = ManualClock()
    let links = MediaLinks(secret: Array(repeating: 9, count: 32), lifetimeMs: 60_000)

    func library(_ rules: MediaRules = MediaRules(maxBytes: 1024, garbageGraceMs: 5_000)) -> MediaLibrary {
        let random = TokenAccountStore.FixedRandom()
        let hasher = PasswordHasher(parameters: ScryptParameters(n: 1024, r: 8, p: 1), workers: 1, random: random)
        let accounts = Accounts(store: tokens, hasher: hasher, random: random, clock: clock)
        return MediaLibrary(store: media, accounts: accounts, links: links, clock: clock, rules: rules)
    }

    func expectRefusal(_ expected: MediaError, _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("expected \(expected)")
        } catch let error as MediaError {
            #expect(error == expected)
        } catch {
            Issue.record("expected MediaError \(expected), got \(error)")
        }
    }

    /// Expects `upload` of `bytes` declared as `type` with `token` to be refused with `expected`.
    func expectUploadRefused(
        _ expected: MediaError, _ library: MediaLibrary,
        _ bytes: [UInt8] = MediaLibraryTests.png, type: String? = "image/png",
        token: String?
    ) async {
        await expectRefusal(expected) { _ = try await library.upload(bytes, contentType: type, token: token) }
    }

    @Test func aSignedInUserUploadsAndGetsTheStoredID() async throws {
        let library = library()
        let token = tokens.issue(userID: 7)
        let id = try await library.upload(Self.png, contentType: "Image/PNG; charset=binary", token: token)
        let stored = MemoryMediaStore.Item(
            id: id, owner: 7, contentType: "image/png", createdAt: clock.now(),
            bytes: Self.png)
        #expect(media.items == [stored])
    }

    @Test func aMissingOrUnknownTokenIsRefusedAndNothingIsStored() async {
        let library = library()
        await expectUploadRefused(.missingToken, library, token: nil)
        await expectUploadRefused(.invalidToken, library, token: Base64URL.encode([UInt8](repeating: 1, count: 32)))
        await expectUploadRefused(.invalidToken, library, token: "x")
        #expect(media.items.isEmpty)
    }

    @Test func aFailingAccountsStoreIsNotAnInvalidToken() async {
        let library = library()
        let token = tokens.issue(userID: 7)
        tokens.failing = true
        await expectUploadRefused(.accountsUnavailable, library, token: token)
        #expect(media.items.isEmpty)
    }

    @Test func aWrongTypeMismatchedBytesOrTooLargeABodyIsRefusedAndNothingIsStored() async {
        let library = library()
        let token = tokens.issue(userID: 7)
        await expectUploadRefused(.unsupportedType, library, type: "image/gif", token: token)
        await expectUploadRefused(.unsupportedType, library, type: "text/html", token: token)
        await expectUploadRefused(.unsupportedType, library, type: nil, token: token)
        await expectUploadRefused(.contentMismatch(.jpeg), library, type: "image/jpeg", token: token)
        let large = Self.jpeg + [UInt8](repeating: 0, count: 1024)
        await expectUploadRefused(.tooLarge(limit: 1024), library, large, type: "image/jpeg", token: token)
        #expect(media.items.isEmpty)
        // The token is checked before anything else, then the type before the size.
        await expectUploadRefused(.missingToken, library, type: "image/gif", token: nil)
        await expectUploadRefused(.unsupportedType, library, large, type: "image/gif", token: token)
    }

    @Test func anUploadOverTheQuotaIsRefusedAndNothingMoreIsStored() async throws {
        let library = library(MediaRules(maxBytes: 1024, garbageGraceMs: 5_000, quotaBytes: 600))
        let token = tokens.issue(userID: 7)
        _ = try await library.upload(
            Self.png + [UInt8](repeating: 1, count: 400), contentType: "image/png",
            token: token)
        do {
            _ = try await library.upload(
                Self.png + [UInt8](repeating: 2, count: 400), contentType: "image/png",
                token: token)
            Issue.record("expected the quota to refuse the upload")
        } catch {
            #expect(error == .quotaExceeded(limit: 600))
        }
        #expect(media.items.count == 1)
    }

    @Test func aStoreFailureIsAStorageFailure() async {
        let library = library()
        let token = tokens.issue(userID: 7)
        media.failing = true
        await expectUploadRefused(.storageFailure, library, token: token)
    }

    @Test func aSignedURLFetchesStoredMediaUntilItExpires() async throws {
        let library = library()
        let id = try await library.upload(Self.png, contentType: "image/png", token: tokens.issue(userID: 7))
        let query = String(links.url(for: id, now: clock.now()).split(separator: "?")[1])
        clock.advance(by: 20_000)
        let download = try await library.download(id: id, query: query)
        #expect(download.media.id == id && download.media.contentType == "image/png")
        #expect(download.validForMs == 40_000)
        await expectRefusal(.link(.malformed)) { _ = try await library.download(id: id, query: nil) }
        await expectRefusal(.link(.badSignature)) {
            _ = try await library.download(id: String(repeating: "e", count: 64), query: query)
        }
        let unknown = String(repeating: "e", count: 64)
        let unknownQuery = String(links.url(for: unknown, now: clock.now()).split(separator: "?")[1])
        await expectRefusal(.notFound) { _ = try await library.download(id: unknown, query: unknownQuery) }
        media.failing = true
        await expectRefusal(.storageFailure) { _ = try await library.download(id: id, query: query) }
        media.failing = false
        clock.advance(by: 40_000)
        await expectRefusal(.link(.expired)) { _ = try await library.download(id: id, query: query) }
    }

    @Test func collectionAsksForUploadsOlderThanTheGracePeriod() async throws {
        let library = library()
        #expect(try await library.collectGarbage() == 0)
        #expect(media.cutoffs == [clock.now() - 5_000])
    }

    @Test func theCollectorRunsPeriodicallyUntilStopped() async throws {
        let collector = MediaCollector(library: library(), periodMs: 1)
        var waited = 0
        while media.cutoffs.count < 3 && waited < 10_000 {
            try await Task.sleep(nanoseconds: 1_000_000)
            waited += 1
        }
        collector.stop()
        let runs = media.cutoffs.count
        #expect(runs >= 3)
        try await Task.sleep(nanoseconds: 20_000_000)
        #expect(media.cutoffs.count == runs)
        collector.stop()  // idempotent
    }
}

/// Media kept in memory, with a switch that makes every call fail.
final class MemoryMediaStore: MediaStore {
    struct Item: Equatable {
        var id: String
        var owner: Int64
        var contentType: String
        var createdAt: Int64
        var bytes: [UInt8]
    }

    struct Failure: Error {}

    private let state = Mutex<(items: [Item], cutoffs: [Int64], failing: Bool)>(([], [], false))

    var items: [Item] { state.withLock { $0.items } }
    var cutoffs: [Int64] { state.withLock { $0.cutoffs } }
    var failing: Bool {
        get { state.withLock { $0.failing } }
        set { state.withLock { $0.failing = newValue } }
    }

    func storeMedia(
        bytes: [UInt8], owner: Int64, contentType: String, createdAt: Int64,
        quotaBytes: Int?
    ) async throws -> String {
        let id = Digest.sha256(bytes).map {
            String($0, radix: 16).count == 1
                ? "0" + String($0, radix: 16)
                : String($0, radix: 16)
        }.joined()
        try state.withLock {
            if $0.failing { throw Failure() }
            let others = $0.items.filter { $0.owner == owner && $0.id != id }.reduce(0) { $0 + $1.bytes.count }
            if let quotaBytes, others + bytes.count > quotaBytes { throw MediaStoreError.quotaExceeded }
            $0.items.append(Item(id: id, owner: owner, contentType: contentType, createdAt: createdAt, bytes: bytes))
        }
        return id
    }

    func media(id: String) async throws -> StoredMedia? {
        try state.withLock {
            if $0.failing { throw Failure() }
            return $0.items.first { $0.id == id }.map {
                StoredMedia(id: $0.id, contentType: $0.contentType, size: $0.bytes.count, path: "/memory/\($0.id)")
            }
        }
    }

    func collectGarbageMedia(uploadedBefore cutoff: Int64) async throws -> Int {
        try state.withLock {
            if $0.failing { throw Failure() }
            $0.cutoffs.append(cutoff)
            let before = $0.items.count
            $0.items.removeAll { $0.createdAt < cutoff }
            return before - $0.items.count
        }
    }
}

/// Accounts reduced to what uploads need: tokens issued for user ids, and a switch that makes lookups fail.
final class TokenAccountStore: AccountStore {
    struct Failure: Error {}

    /// Bytes that are never used for tokens here (no one registers or logs in).
    struct FixedRandom: RandomSource {
        func bytes(_ count: Int) -> [UInt8] { [UInt8](repeating: 0, count: count) }
    }

    private let state = Mutex<(users: [[UInt8]: User], next: UInt8, failing: Bool)>(([:], 1, false))

    var failing: Bool {
        get { state.withLock { $0.failing } }
        set { state.withLock { $0.failing = newValue } }
    }

    /// A token that authenticates as user `userID`.
    func issue(userID: Int64) -> String {
        state.withLock {
            let raw = [UInt8](repeating: $0.next, count: 32)
            $0.next += 1
            $0.users[Digest.sha256(raw)] = User(id: userID, username: "u\(userID)", name: "U", isGuest: true)
            return Base64URL.encode(raw)
        }
    }

    func user(tokenHash: [UInt8], issuedAfter: Int64?) async throws -> User? {
        try state.withLock {
            if $0.failing { throw Failure() }
            return $0.users[tokenHash]
        }
    }

    func createUser(_ user: NewUser) async throws -> User { throw Failure() }
    func credentials(username: String) async throws -> StoredCredentials? { nil }
    func credentials(email: String) async throws -> StoredCredentials? { nil }
    func suspension(userID: Int64, now: Int64) async throws -> Suspension? { nil }
    func insertToken(hash: [UInt8], userID: Int64, createdAt: Int64) async throws { throw Failure() }
    func deleteToken(hash: [UInt8]) async throws -> Bool { false }
    func deleteTokens(userID: Int64) async throws -> Int { 0 }
    func markSeen(userIDs: [Int64], at: Int64) async throws {}
    func purgeGuests(seenBefore cutoff: Int64, sparing: Set<Int64>) async throws -> GuestPurge { GuestPurge() }
}
