// What media needs from durable storage, stated as a protocol so the media rules know nothing of SQLite or of
// how bytes sit on disk. An upload's file and row are both committed before `storeMedia` returns, so an
// acknowledged upload survives a crash; a lookup finds only media whose row and file are both in place; collection
// removes what no relic of its owner names once it is older than a cutoff.

/// One stored media item, as needed to serve it.
public struct StoredMedia: Sendable, Equatable {
    /// The lowercase hex SHA-256 of the content.
    public let id: String
    /// The MIME type it was uploaded as.
    public let contentType: String
    /// Its size in bytes.
    public let size: Int
    /// The file holding the bytes.
    public let path: String

    /// Creates the description of a stored item.
    public init(id: String, contentType: String, size: Int, path: String) {
        self.id = id
        self.contentType = contentType
        self.size = size
        self.path = path
    }
}

/// Why a store refused an upload.
public enum MediaStoreError: Error, Equatable {
    /// The owner's uploads would exceed their quota.
    case quotaExceeded
}

/// Durable storage for uploaded media.
public protocol MediaStore: Sendable {
    /// Stores `bytes` uploaded by `owner` as `contentType` (file first, then its row, both committed on return) and
    /// returns the media id: the lowercase hex SHA-256 of the bytes. Identical content is stored once.
    /// With `quotaBytes`, the upload is refused with `MediaStoreError.quotaExceeded` (nothing committed) when the
    /// owner's other uploads and this one would together exceed it, checked in the same transaction as the row.
    func storeMedia(
        bytes: [UInt8], owner: Int64, contentType: String, createdAt: Int64,
        quotaBytes: Int?
    ) async throws -> String
    /// The media with `id` (whoever uploaded it) if a row names it and its file is in place; nil otherwise.
    func media(id: String) async throws -> StoredMedia?
    /// Deletes uploads created before `cutoff` (ms) that no relic of their owner names, and the files no upload
    /// names any more; returns how many uploads were deleted.
    func collectGarbageMedia(uploadedBefore cutoff: Int64) async throws -> Int
}
