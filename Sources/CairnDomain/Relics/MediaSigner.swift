// The port through which features hand out media: relics, pictures, profiles and buckets show a picture to those
// allowed to see it as a short-lived signed URL. `MediaLinks` signs them (it holds the key); the features see only
// this port, and their tests a fixed signer.

/// Signs short-lived media URLs for those allowed to see the media (implemented by `MediaLinks`).
public protocol MediaSigner: Sendable {
    /// A URL path (with its signature) through which `media` can be fetched for a while after `now`.
    func url(for media: String, now: Int64) -> String
}
