// Where the images stand for a user or an item without a photo. The contract gives such objects a
// `placeholder_url` instead of a `photo_url`; the hub serves these images itself on its own port (plain HTTP, no
// signature: they show nothing of anyone), so every client can draw the same picture without shipping its own.

/// Paths of the placeholder images the hub serves.
public enum Placeholders {
    /// The prefix every placeholder path starts with.
    public static let pathPrefix = "/v1/placeholder"
    /// A user without a profile photo.
    public static let user = pathPrefix + "/user.svg"
    /// An item without a photo.
    public static let item = pathPrefix + "/item.svg"
}
