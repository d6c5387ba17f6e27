import CairnCrypto
// Media in the store, the domain's `MediaStore`: a `media` row per (content, uploader) names a content-addressed
// file (MediaFiles). The file is written and fsynced before the row is committed, and the row is committed before
// the upload is acknowledged, so acknowledged media survives a crash. Garbage collection deletes rows no relic of
// their owner names once they are older than a grace period, then the files no row names.
//
// The race that matters: an upload of content whose file the collector is removing. Both the upload's row insert
// and the collector's deletions run in write transactions, which SQLite (and GRDB's single writer) serialise. The
// collector unlinks files inside its transaction, after checking no row names them; the upload re-checks its file
// inside its own transaction and rewrites it from the bytes it still holds if it vanished. Whichever runs first, a
// committed row always names a file that exists.
public import CairnMedia
import Dispatch
import Foundation
import GRDB

extension SQLiteStore: MediaStore {
    /// Stores `bytes` uploaded by `owner` as `contentType`: hashes them, writes the file (unless identical content
    /// is already there), then commits the row. Returns the media id (lowercase hex SHA-256). Hashing and file
    /// writes run on a dispatch queue, never on the caller's thread.
    public func storeMedia(
        bytes: [UInt8], owner: Int64, contentType: String, createdAt: Int64,
        quotaBytes: Int? = nil
    ) async throws -> String {
        let id = try await writeMediaFile(bytes)
        try await commitMedia(
            id: id, bytes: bytes, owner: owner, contentType: contentType, createdAt: createdAt,
            quotaBytes: quotaBytes)
        return id
    }

    /// First step of `storeMedia`: hashes `bytes` and puts their file in place; returns the id.
    func writeMediaFile(_ bytes: [UInt8]) async throws -> String {
        let files = mediaFiles
        return try await Self.offloaded { () throws -> String in
            let id = Self.hex(Digest.sha256(bytes))
            try files.write(id, bytes: bytes)
            return id
        }
    }

    /// Second step of `storeMedia`: commits the row, restoring the file first if the collector removed it since.
    func commitMedia(
        id: String, bytes: [UInt8], owner: Int64, contentType: String, createdAt: Int64,
        quotaBytes: Int? = nil
    ) async throws {
        let files = mediaFiles
        try await pool.write { db in
            // The owner's quota, in the row's own transaction: uploads racing each other cannot both slip under it.
            // (A refused upload's file, if new, is an orphan the collector removes.)
            if let quotaBytes {
                let others =
                    try Int.fetchOne(
                        db, sql: "SELECT COALESCE(SUM(size), 0) FROM media WHERE owner_id = ? AND id <> ?",
                        arguments: [owner, id]) ?? 0
                if others + bytes.count > quotaBytes { throw MediaStoreError.quotaExceeded }
            }
            try db.execute(
                // Uploading the same bytes again restarts the grace period: the newer upload was acknowledged too.
                sql: """
                    INSERT INTO media (id, owner_id, content_type, size, created_at) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (id, owner_id) DO UPDATE SET created_at = MAX(created_at, excluded.created_at)
                    """,
                arguments: [id, owner, contentType, bytes.count, createdAt])
            // The collector may have removed the file between our write and this transaction (see the top).
            if !files.contains(id, size: bytes.count) { try files.write(id, bytes: bytes) }
        }
    }

    /// The media with `id` (whoever uploaded it) if a row names it and its file is in place.
    public func media(id: String) async throws -> StoredMedia? {
        guard MediaLinks.isMediaID(id) else { return nil }
        let files = mediaFiles
        let found = try await pool.read { db -> (type: String, size: Int)? in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT content_type, size FROM media WHERE id = ? LIMIT 1", arguments: [id])
            else { return nil }
            return (row["content_type"], row["size"])
        }
        guard let found, files.contains(id, size: found.size) else { return nil }
        return StoredMedia(id: id, contentType: found.type, size: found.size, path: files.path(for: id))
    }

    /// Whether `owner` has uploaded the media `id` (the check a relic needs before naming it).
    public func mediaExists(id: String, owner: Int64) async throws -> Bool {
        try await pool.read { db in
            try Bool.fetchOne(db, sql: "SELECT 1 FROM media WHERE id = ? AND owner_id = ?", arguments: [id, owner])
                ?? false
        }
    }

    /// Deletes media rows created before `cutoff` (ms) that no relic, profile photo, item photo or picture of their
    /// owner names,
    /// then the files no row names any more (including files left without a row by a crash, if older than
    /// `cutoff`). Returns the number of rows deleted.
    @discardableResult
    public func collectGarbageMedia(uploadedBefore cutoff: Int64) async throws -> Int {
        let files = mediaFiles
        let strays = try await Self.offloaded { () -> [String] in
            files.removeTemporaries(modifiedBefore: cutoff)
            return files.ids(modifiedBefore: cutoff)
        }
        return try await pool.write { db in
            let victims = try Row.fetchAll(
                db,
                sql: """
                    SELECT id, owner_id FROM media m
                    WHERE created_at < ?
                      AND NOT EXISTS (SELECT 1 FROM relics r WHERE r.media_id = m.id AND r.creator_id = m.owner_id)
                      AND NOT EXISTS (SELECT 1 FROM users u WHERE u.photo_media_id = m.id AND u.id = m.owner_id)
                      AND NOT EXISTS (SELECT 1 FROM items i WHERE i.photo_id = m.id AND i.photo_owner = m.owner_id)
                      AND NOT EXISTS (
                        SELECT 1 FROM pictures p WHERE p.media_id = m.id AND p.by_id = m.owner_id AND p.hidden < 2)
                    """, arguments: [cutoff])
            for row in victims {
                try db.execute(
                    sql: "DELETE FROM media WHERE id = ? AND owner_id = ?",
                    arguments: [row["id"] as String, row["owner_id"] as Int64])
            }
            var candidates = Set(strays)
            for row in victims { candidates.insert(row["id"]) }
            for id in candidates {
                let named =
                    try Bool.fetchOne(db, sql: "SELECT 1 FROM media WHERE id = ? LIMIT 1", arguments: [id]) ?? false
                if !named { try files.remove(id) }
            }
            return victims.count
        }
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
