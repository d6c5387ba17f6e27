// The media feature: who may upload (any signed-in account, guests too: the bearer token is checked through
// `Accounts`), what may be uploaded (the accepted `MediaType`s, whose leading bytes must match the declared type,
// up to a size limit), who may download (holders of a signed URL, `MediaLinks`, checked without any lookup), and
// what is collected (uploads no relic of their owner names, once older than a grace period). The bytes and rows
// live behind `MediaStore`; the HTTP mapping is CairnProtocol's `MediaEndpoint`. Sendable and async: media work
// runs off the event loop, and nothing here touches live state. The size limit is the one exception to "fixed at
// start": it is the live admin setting `max_upload_bytes` (`register(in:)`), held in an atomic that uploads read.
public import CairnAdmin
public import CairnCore
import CairnErrorCodes
public import CairnSessions
public import Logging
import Synchronization

/// Limits on uploads and how long unused uploads are kept.
public struct MediaRules: Sendable {
    /// Largest upload in bytes.
    public var maxBytes = 20 << 20
    /// How long an upload no relic names is kept before it may be collected, in milliseconds: the time a client
    /// has between uploading and creating the relic that uses it.
    public var garbageGraceMs: Int64 = 3_600_000
    /// Bytes of media one user may have stored in all (nil: no quota).
    public var quotaBytes: Int? = 1 << 30

    /// Creates the rules.
    public init(maxBytes: Int = 20 << 20, garbageGraceMs: Int64 = 3_600_000, quotaBytes: Int? = 1 << 30) {
        self.maxBytes = maxBytes
        self.garbageGraceMs = garbageGraceMs
        self.quotaBytes = quotaBytes
    }
}

/// A stored media item a signed URL may fetch now.
public struct MediaDownload: Sendable, Equatable {
    /// The item.
    public let media: StoredMedia
    /// How much longer the URL that asked for it stays valid, in milliseconds (not negative).
    public let validForMs: Int64
}

/// Uploads, signed downloads and collection of media.
public final class MediaLibrary: Sendable {
    private let store: any MediaStore
    private let accounts: Accounts
    /// Issues and checks signed URLs.
    public let links: MediaLinks
    private let clock: any Clock
    /// The limits it was made with (`maxBytes` is only the default of the live limit, `maxBytes`).
    public let rules: MediaRules
    private let logger: Logger
    private let liveMaxBytes: Atomic<Int>

    /// The most the live limit may be set to: the transport's body limit for the media mount, fixed at start.
    public static let maxBytesCeiling = 1 << 30
    /// The largest upload accepted now, in bytes.
    public var maxBytes: Int { liveMaxBytes.load(ordering: .relaxed) }

    /// Creates the feature over a store, the accounts that tokens are checked against, a URL signer and a clock.
    public init(
        store: any MediaStore, accounts: Accounts, links: MediaLinks, clock: any Clock,
        rules: MediaRules = MediaRules(), logger: Logger = Logger(label: "cairn.media")
    ) {
        self.store = store
        self.accounts = accounts
        self.links = links
        self.clock = clock
        self.rules = rules
        self.logger = logger
        self.liveMaxBytes = Atomic(rules.maxBytes)
    }

    /// Registers the live setting `max_upload_bytes` (its default: `rules.maxBytes`, the configured limit). Call
    /// on the loop, while the hub is assembled.
    public func register(in settings: AdminSettings) {
        settings.registerInteger(
            "max_upload_bytes", range: 1024...Int64(Self.maxBytesCeiling), default: Int64(rules.maxBytes),
            help: "Largest media upload in bytes (POST /v1/media); bigger ones are refused with 413."
        ) { [self] limit in liveMaxBytes.store(Int(limit), ordering: .relaxed) }
    }

    /// The account that may upload with `token`: checked from the request's headers, before its body is read,
    /// so nobody without an account makes the server hold an upload's bytes.
    public func uploader(token: String?) async throws(MediaError) -> User {
        guard let token else { throw .missingToken }
        do {
            return try await accounts.authenticate(token: token)
        } catch {
            switch error.code {
            case .internal: throw .accountsUnavailable
            case .suspended: throw .suspended(error.message)
            default: throw .invalidToken
            }
        }
    }

    /// Stores `bytes` for the holder of `token`, declared as `contentType`, and returns the media id once the
    /// bytes and their row are committed. Checked in order: the token, the type, the size, the leading bytes.
    public func upload(_ bytes: [UInt8], contentType: String?, token: String?) async throws(MediaError) -> String {
        let user = try await uploader(token: token)
        guard let type = contentType.flatMap(MediaType.init(contentType:)) else { throw .unsupportedType }
        let limit = maxBytes
        guard bytes.count <= limit else { throw .tooLarge(limit: limit) }
        guard type.matches(bytes) else { throw .contentMismatch(type) }
        do {
            return try await store.storeMedia(
                bytes: bytes, owner: user.id, contentType: type.rawValue,
                createdAt: clock.now(), quotaBytes: rules.quotaBytes)
        } catch MediaStoreError.quotaExceeded {
            throw .quotaExceeded(limit: rules.quotaBytes ?? 0)
        } catch {
            logger.error("storing media for user \(user.id) failed: \(error)")
            throw .storageFailure
        }
    }

    /// The media `id` for a request whose signed-URL query is `query`: the signature and expiry are checked first,
    /// then the store is asked.
    public func download(id: String, query: String?) async throws(MediaError) -> MediaDownload {
        let now = clock.now()
        let expires: Int64
        do {
            expires = try links.verify(media: id, query: query, now: now)
        } catch {
            throw .link(error)
        }
        let stored: StoredMedia?
        do {
            stored = try await store.media(id: id)
        } catch {
            logger.error("looking up media \(id) failed: \(error)")
            throw .storageFailure
        }
        guard let stored else { throw .notFound }
        return MediaDownload(media: stored, validForMs: max(0, expires - now))
    }

    /// Collects once: deletes uploads older than the grace period that no relic of their owner names, and the
    /// files no upload names. Returns how many uploads were deleted.
    @discardableResult
    public func collectGarbage() async throws(MediaError) -> Int {
        do {
            return try await store.collectGarbageMedia(uploadedBefore: clock.now() - rules.garbageGraceMs)
        } catch {
            logger.error("media garbage collection failed: \(error)")
            throw .storageFailure
        }
    }
}
