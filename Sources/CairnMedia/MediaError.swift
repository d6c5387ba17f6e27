// Why the media feature refused an upload or a download, as values the HTTP mapping turns into status codes and
// messages (CairnProtocol's `MediaEndpoint`). The domain states what went wrong; it writes no HTTP and no JSON.

/// A refusal from the media feature.
public enum MediaError: Error, Equatable, Sendable {
    /// No bearer token was presented.
    case missingToken
    /// The token is not one the hub issued, or it was revoked.
    case invalidToken
    /// The token's account is suspended (the message says until when and why); nothing was stored.
    case suspended(String)
    /// The accounts store failed while checking the token; nothing was stored.
    case accountsUnavailable
    /// The declared type is not one Cairn accepts (`MediaType`).
    case unsupportedType
    /// The body is larger than `limit` bytes.
    case tooLarge(limit: Int)
    /// The uploader's stored media would exceed their quota.
    case quotaExceeded(limit: Int)
    /// The body does not begin the way data of the declared type does.
    case contentMismatch(MediaType)
    /// The signed URL was refused.
    case link(MediaLinkError)
    /// No stored media has this id (or its file is gone).
    case notFound
    /// The media store failed; the upload was not stored, or the lookup did not happen.
    case storageFailure
}
