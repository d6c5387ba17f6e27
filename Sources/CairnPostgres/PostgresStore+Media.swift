// Media in the shared store, the domain's `MediaStore`: a `media` row per (content, uploader), and the content once
// in `media_blobs`, both committed in one transaction, so an acknowledged upload survives a crash and any node can
// serve what any node accepted. Serving needs a file, so each node keeps a content-addressed copy of what it serves
// (`MediaCache`): a lookup that misses fetches the bytes once (concurrent misses of one id share the fetch), checks
// them against their id and writes the copy. Garbage collection deletes rows no relic, photo or picture of their
// owner names once they are older than a grace period, then the blobs no row names, in one transaction; then this
// node's copies of whatever no row names any more (another node may have collected them).
//
// The race that matters: an upload of content whose blob the collector is deleting. The upload reads the blob (and
// locks it) before relying on it; the collector reads that no row names it before deleting it. Under SERIALIZABLE
// one of the two is refused and run again, so a committed row always has its blob. Copies in the cache are written
// only after the commit and never trusted for more than their size; losing one costs a fetch.
import CairnCrypto
public import CairnMedia
import Dispatch
import Foundation

extension PostgresStore: MediaStore {
    /// Stores `bytes` uploaded by `owner` as `contentType`: hashes them off the caller's thread, commits the row and
    /// (unless identical content is stored already) the bytes, then keeps a copy in this node's cache. Returns the
    /// media id (lowercase hex SHA-256).
    public func storeMedia(
        bytes: [UInt8], owner: Int64, contentType: String, createdAt: Int64,
        quotaBytes: Int? = nil
    ) async throws -> String {
        let id = try await Self.offloaded { Self.hex(Digest.sha256(bytes)) }
        try await pool.write { db in
            // The owner's quota, in the row's own transaction: uploads racing each other cannot both slip under it.
            if let quotaBytes {
                let others: Int =
                    try db.scalar(
                        "SELECT coalesce(SUM(size), 0)::bigint FROM media WHERE owner_id = ? AND id <> ?", [owner, id])
                    ?? 0
                if others + bytes.count > quotaBytes { throw MediaStoreError.quotaExceeded }
            }
            // Uploading the same bytes again restarts the grace period: the newer upload was acknowledged too.
            try db.execute(
                """
                INSERT INTO media (id, owner_id, content_type, size, created_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (id, owner_id) DO UPDATE SET created_at = greatest(media.created_at, excluded.created_at)
                """, [id, owner, contentType, bytes.count, createdAt])
            // The bytes are sent only when no blob holds them; the one found is locked until the commit.
            let stored = try db.row("SELECT 1 FROM media_blobs WHERE id = ? FOR KEY SHARE", [id]) != nil
            if !stored {
                try db.execute(
                    "INSERT INTO media_blobs (id, bytes) VALUES (?, ?) ON CONFLICT (id) DO NOTHING",
                    [id, PostgresBytes(bytes)])
            }
        }
        // The uploader's node is likely to serve it first. The upload is committed: a cache failure is only a miss.
        let cache = mediaCache
        _ = try? await Self.offloaded { try cache.write(id, bytes: bytes) }
        return id
    }

    /// The media with `id` (whoever uploaded it) if a row names it and its bytes are stored; the path is this
    /// node's copy, fetched first if missing.
    public func media(id: String) async throws -> StoredMedia? {
        guard MediaLinks.isMediaID(id) else { return nil }
        let found = try await pool.read { db -> (type: String, size: Int)? in
            try db.row("SELECT content_type, size FROM media WHERE id = ? LIMIT 1", [id]).map {
                ($0["content_type"], $0["size"])
            }
        }
        guard let found else { return nil }
        let cache = mediaCache
        if try await Self.offloaded({ cache.contains(id, size: found.size) }) == false {
            let pool = pool
            let fetched = try await mediaFetches.once(id) {
                guard
                    let bytes = try await pool.read({ db in
                        try db.scalar("SELECT bytes FROM media_blobs WHERE id = ?", [id], as: [UInt8].self)
                    })
                else { return false }
                return try await Self.offloaded {
                    // Never serve bytes that are not what their name says.
                    guard Self.hex(Digest.sha256(bytes)) == id else { return false }
                    try cache.write(id, bytes: bytes)
                    return true
                }
            }
            guard fetched, cache.contains(id, size: found.size) else { return nil }
        }
        return StoredMedia(id: id, contentType: found.type, size: found.size, path: cache.path(for: id))
    }

    /// Whether `owner` has uploaded the media `id` (the check a relic needs before naming it).
    public func mediaExists(id: String, owner: Int64) async throws -> Bool {
        try await pool.read { db in
            try db.scalar("SELECT EXISTS(SELECT 1 FROM media WHERE id = ? AND owner_id = ?)", [id, owner]) ?? false
        }
    }

    /// Deletes media rows created before `cutoff` (ms) that no relic, profile photo, item photo or picture of their
    /// owner names, and the blobs no row names any more, in one transaction; then this node's copies that no row
    /// names (collected here or by another node) and its cache's temporary files older than `cutoff`. Returns the
    /// number of rows deleted.
    @discardableResult
    public func collectGarbageMedia(uploadedBefore cutoff: Int64) async throws -> Int {
        let (deleted, blobs) = try await pool.write { db -> (Int, [String]) in
            let victims = try db.scalars(
                """
                DELETE FROM media m
                WHERE created_at < ?
                  AND NOT EXISTS (SELECT 1 FROM relics r WHERE r.media_id = m.id AND r.creator_id = m.owner_id)
                  AND NOT EXISTS (SELECT 1 FROM users u WHERE u.photo_media_id = m.id AND u.id = m.owner_id)
                  AND NOT EXISTS (SELECT 1 FROM items i WHERE i.photo_id = m.id AND i.photo_owner = m.owner_id)
                  AND NOT EXISTS (
                    SELECT 1 FROM pictures p WHERE p.media_id = m.id AND p.by_id = m.owner_id AND p.hidden < 2)
                RETURNING m.id
                """, [cutoff], as: String.self)
            guard !victims.isEmpty else { return (0, []) }
            let blobs = try db.scalars(
                """
                DELETE FROM media_blobs b
                WHERE b.id = ANY(?::text[]) AND NOT EXISTS (SELECT 1 FROM media m WHERE m.id = b.id)
                RETURNING b.id
                """, [PostgresTextArray(Array(Set(victims)))], as: String.self)
            return (victims.count, blobs)
        }
        let cache = mediaCache
        let cached = try await Self.offloaded { () -> [String] in
            cache.removeTemporaries(modifiedBefore: cutoff)
            for id in blobs { cache.remove(id) }
            return cache.ids()
        }
        guard !cached.isEmpty else { return deleted }
        // A copy is written only after its row committed, so one whose id no row names is a collected upload's.
        let named = Set(
            try await pool.read { db in
                try db.scalars(
                    "SELECT DISTINCT id FROM media WHERE id = ANY(?::text[])", [PostgresTextArray(cached)],
                    as: String.self)
            })
        let strays = cached.filter { !named.contains($0) }
        if !strays.isEmpty {
            try await Self.offloaded { for id in strays { cache.remove(id) } }
        }
        return deleted
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Runs blocking work (hashing, file I/O) on a dispatch queue so it never occupies the cooperative pool.
    static func offloaded<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .utility).async {
                continuation.resume(with: Result { try work() })
            }
        }
    }
}

/// Fetches of media bytes in progress, so concurrent misses of one id wait for one fetch instead of each making
/// their own.
final class MediaFetches: @unchecked Sendable {
    private let lock = NSLock()
    private var running: [String: Task<Bool, any Error>] = [:]

    /// Runs `fetch` for `id` unless a fetch of `id` is running, then waits for that one's result.
    func once(_ id: String, _ fetch: @escaping @Sendable () async throws -> Bool) async throws -> Bool {
        let task = lock.withLock {
            if let task = running[id] { return task }
            let task = Task { try await fetch() }
            running[id] = task
            return task
        }
        defer { lock.withLock { if running[id] == task { running[id] = nil } } }
        return try await task.value
    }
}
