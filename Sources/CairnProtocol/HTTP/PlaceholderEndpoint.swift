// `/v1/placeholder/*.svg` over plain HTTP on the hub's port: the images that stand for a user or an item without
// a photo (`Placeholders`). They show nothing of anyone, so they need no signature and may be cached by anyone for
// a day. Small, neutral silhouettes on a grey disc, drawn the same by every client.
public import CairnLoop
import CairnMedia

/// The HTTP service for the placeholder images.
public struct PlaceholderEndpoint: HTTPService {
    /// A person: head and shoulders.
    static let user = Array(
        """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64">\
        <circle cx="32" cy="32" r="32" fill="#d5d8dc"/>\
        <circle cx="32" cy="25" r="11" fill="#f4f6f7"/>\
        <path d="M12 54c3-11 11-16 20-16s17 5 20 16a30 30 0 0 1-40 0z" fill="#f4f6f7"/>\
        </svg>

        """.utf8)
    /// A thing: a box.
    static let item = Array(
        """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64">\
        <circle cx="32" cy="32" r="32" fill="#d5d8dc"/>\
        <path d="M32 14l16 8v20l-16 8-16-8V22z" fill="#f4f6f7"/>\
        <path d="M16 22l16 8 16-8M32 30v20" fill="none" stroke="#d5d8dc" stroke-width="2"/>\
        </svg>

        """.utf8)

    /// Creates the endpoint.
    public init() {}

    /// Serves the two images; 404 for other names, 405 for methods other than GET and HEAD.
    public func handle(_ request: HTTPRequest) async -> HTTPReply {
        guard request.method == "GET" || request.method == "HEAD" else {
            return HTTPReply.plainText(405, "method not allowed\n", headers: [("Allow", "GET, HEAD")])
        }
        let image: [UInt8]
        switch request.path {
        case Placeholders.user: image = Self.user
        case Placeholders.item: image = Self.item
        default: return HTTPReply.plainText(404, "not found\n")
        }
        return HTTPReply(
            status: 200, contentType: "image/svg+xml",
            headers: [("Cache-Control", "public, max-age=86400"), ("X-Content-Type-Options", "nosniff")],
            body: .bytes(image))
    }
}
