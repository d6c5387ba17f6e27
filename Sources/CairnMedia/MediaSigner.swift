// The port through which features hand out signed media URLs (`MediaLinks` is the hub's signer): relics, profiles,
// items and pictures show a URL only to those allowed to see the media; each says so by conforming to `ShowsMedia`.

/// Signs short-lived media URLs for those allowed to see the media (implemented by the media service).
public protocol MediaSigner: Sendable {
    /// A URL path (with its signature) through which `media` can be fetched for a while after `now`.
    func url(for media: String, now: Int64) -> String
}

/// A feature that shows media URLs through a signer the hub sets once it has one (relics, profiles, buckets,
/// pictures); without a signer it shows media ids only, or no URL.
package protocol ShowsMedia: AnyObject {
    /// The signer in force.
    var mediaSigner: (any MediaSigner)? { get set }
}
