// The kinds of media Cairn accepts, and the check that an upload is what it claims to be. Media is served back
// with the content type it was uploaded as; checking the leading "magic" bytes against that type keeps the hub
// from serving, say, HTML or script labelled as an image (together with `X-Content-Type-Options: nosniff`).

/// An accepted media content type.
public enum MediaType: String, Sendable, CaseIterable {
    /// JPEG image.
    case jpeg = "image/jpeg"
    /// PNG image.
    case png = "image/png"
    /// WebP image.
    case webp = "image/webp"
    /// MP4 video.
    case mp4 = "video/mp4"

    /// Parses a `Content-Type` header value: case-insensitive, parameters (`; charset=...`) ignored. Nil for any
    /// type Cairn does not accept.
    public init?(contentType: String) {
        let essence = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let trimmed = essence.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()
        self.init(rawValue: String(trimmed).lowercased())
    }

    /// Whether `bytes` begin the way a file of this type does.
    public func matches(_ bytes: [UInt8]) -> Bool {
        func has(_ magic: [UInt8], at offset: Int) -> Bool {
            bytes.count >= offset + magic.count && Array(bytes[offset..<offset + magic.count]) == magic
        }
        switch self {
        case .jpeg: return has([0xFF, 0xD8, 0xFF], at: 0)
        case .png: return has([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], at: 0)
        case .webp: return has(Array("RIFF".utf8), at: 0) && has(Array("WEBP".utf8), at: 8)
        case .mp4: return has(Array("ftyp".utf8), at: 4)
        }
    }
}
