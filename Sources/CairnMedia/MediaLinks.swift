// Signed media URLs. Media is never served by id alone: the hub hands a URL to someone allowed to see the media,
// and the URL itself is the permission — an HMAC-SHA-256 over the media id and an expiry, under a secret only the
// hub holds. Checking one needs no lookup and no state, so serving stays cheap; a URL cannot be moved to another
// id, extended, or forged, and it stops working when it expires. Pure: the clock is passed in.
import CairnCrypto

/// Why a signed media URL was refused.
public enum MediaLinkError: Error, Equatable, Sendable {
    /// The id or the query is not in the shape the hub issues (missing, repeated or ill-formed `exp` or `sig`).
    case malformed
    /// The signature does not match the id and expiry.
    case badSignature
    /// The URL was genuine but its expiry has passed.
    case expired
}

/// Issues and checks short-lived signed URLs for media.
public struct MediaLinks: Sendable {
    /// The path under which media is served; a URL is `<prefix>/<id>?exp=<ms>&sig=<base64url>`.
    public static let pathPrefix = "/v1/media"

    private let secret: [UInt8]
    /// How long an issued URL stays valid, in milliseconds.
    public let lifetimeMs: Int64

    /// Creates a signer with `secret` (at least 32 random bytes) and URLs valid for `lifetimeMs`.
    public init(secret: [UInt8], lifetimeMs: Int64 = 600_000) {
        precondition(!secret.isEmpty, "a media link secret must not be empty")
        self.secret = secret
        self.lifetimeMs = lifetimeMs
    }

    /// Whether `text` is a media id: 64 lowercase hexadecimal digits (a SHA-256).
    public static func isMediaID(_ text: String) -> Bool {
        let utf8 = text.utf8
        return utf8.count == 64 && utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// A path and query that serve `media` until `now + lifetimeMs`.
    public func url(for media: String, now: Int64) -> String {
        let expires = now + lifetimeMs
        return "\(Self.pathPrefix)/\(media)?exp=\(expires)&sig=\(Base64URL.encode(signature(media, expires)))"
    }

    /// Checks the query of a request for `media` (the id from the path) and returns the URL's expiry in
    /// milliseconds. The signature is checked before the expiry, in constant time, so a forged URL learns nothing.
    @discardableResult
    public func verify(media: String, query: String?, now: Int64) throws(MediaLinkError) -> Int64 {
        guard Self.isMediaID(media), let query else { throw .malformed }
        var expiresText: Substring?
        var signatureText: Substring?
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            guard let eq = pair.firstIndex(of: "=") else { throw .malformed }
            let value = pair[pair.index(after: eq)...]
            switch pair[..<eq] {
            case "exp":
                guard expiresText == nil else { throw .malformed }
                expiresText = value
            case "sig":
                guard signatureText == nil else { throw .malformed }
                signatureText = value
            default:
                continue
            }
        }
        guard let expiresText, let signatureText,
            !expiresText.isEmpty, expiresText.utf8.count <= 18,
            expiresText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let expires = Int64(expiresText),
            let given = Base64URL.decode(String(signatureText)), given.count == 32
        else { throw .malformed }
        guard Digest.constantTimeEqual(given, signature(media, expires)) else { throw .badSignature }
        guard now < expires else { throw .expired }
        return expires
    }

    private func signature(_ media: String, _ expires: Int64) -> [UInt8] {
        HMAC.sha256(key: secret, message: Array("cairn.media.v1\n\(media)\n\(expires)".utf8))
    }
}

extension MediaLinks: MediaSigner {}
