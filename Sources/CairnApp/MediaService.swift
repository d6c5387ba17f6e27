// `/v1/media` over plain HTTP on the hub's port. `POST /v1/media` stores an upload from any signed-in user (guests
// too) and answers `201 {"media": "<id>"}` once the bytes and the row are committed; `GET /v1/media/<id>?exp&sig`
// serves media only to holders of a signed URL the hub issued (MediaLinks). Runs off the service thread: the
// transport hands over complete requests and writes the replies. Every refusal is a JSON `{"error": "..."}`.
import CairnDomain
import CairnServer
import CairnStore
import CairnWire
import Logging

/// The HTTP service for uploading and serving media.
public struct MediaService: HTTPService {
    let store: SQLiteStore
    let accounts: Accounts
    let links: MediaLinks
    let clock: any Clock
    let maxBytes: Int
    let logger: Logger

    /// Creates the service.
    public init(store: SQLiteStore, accounts: Accounts, links: MediaLinks, clock: any Clock, maxBytes: Int,
                logger: Logger = Logger(label: "cairn.media")) {
        self.store = store
        self.accounts = accounts
        self.links = links
        self.clock = clock
        self.maxBytes = maxBytes
        self.logger = logger
    }

    /// Routes one request.
    public func handle(_ request: HTTPRequest) async -> HTTPReply {
        let prefix = MediaLinks.pathPrefix
        switch request.method {
        case "POST" where request.path == prefix || request.path == prefix + "/":
            return await upload(request)
        case "GET", "HEAD":
            guard request.path.hasPrefix(prefix + "/") else { return Self.error(404, "not found") }
            return await serve(id: String(request.path.dropFirst(prefix.count + 1)), query: request.query)
        default:
            return Self.error(405, "method not allowed", headers: [("Allow", request.path == prefix ? "POST" : "GET, HEAD")])
        }
    }

    private func upload(_ request: HTTPRequest) async -> HTTPReply {
        guard let authorization = request.authorization else {
            return Self.error(401, "bearer token required", headers: [("WWW-Authenticate", "Bearer")])
        }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            return Self.error(401, "bearer token required", headers: [("WWW-Authenticate", "Bearer")])
        }
        let user: User
        do {
            user = try await accounts.authenticate(token: String(parts[1]).trimmingWhitespace)
        } catch {
            if error.code == .internal { return Self.error(500, "storage failure; try again") }
            return Self.error(401, "invalid or revoked token", headers: [("WWW-Authenticate", "Bearer")])
        }
        guard let type = request.contentType.flatMap(MediaType.init(contentType:)) else {
            return Self.error(415, "content type must be one of " + MediaType.allCases.map(\.rawValue).joined(separator: ", "))
        }
        guard request.body.count <= maxBytes else { return Self.error(413, "body exceeds \(maxBytes) bytes") }
        guard type.matches(request.body) else {
            return Self.error(415, "the body is not \(type.rawValue) data")
        }
        do {
            let id = try await store.storeMedia(bytes: request.body, owner: user.id, contentType: type.rawValue,
                                                createdAt: clock.now())
            var w = JSONWriter(capacity: 96)
            w.beginObject(); w.key("media"); w.string(id); w.endObject()
            return HTTPReply(status: 201, contentType: "application/json", headers: [("Cache-Control", "no-store")],
                             body: .bytes(w.bytes))
        } catch {
            logger.error("storing media for user \(user.id) failed: \(error)")
            return Self.error(500, "storage failure; the upload was not stored")
        }
    }

    private func serve(id: String, query: String?) async -> HTTPReply {
        let now = clock.now()
        let expires: Int64
        do {
            expires = try links.verify(media: id, query: query, now: now)
        } catch {
            return Self.error(403, error == .expired ? "link expired" : "invalid link")
        }
        let stored: StoredMedia?
        do { stored = try await store.media(id: id) } catch {
            logger.error("looking up media \(id) failed: \(error)")
            return Self.error(500, "storage failure; try again")
        }
        guard let stored, let file = HTTPFile.open(path: stored.path) else { return Self.error(404, "media not found") }
        let maxAge = max(0, (expires - now) / 1000)
        return HTTPReply(status: 200, contentType: stored.contentType,
                         headers: [("Cache-Control", "private, max-age=\(maxAge)"), ("X-Content-Type-Options", "nosniff")],
                         body: .file(file))
    }

    static func error(_ status: Int, _ message: String, headers: [(name: String, value: String)] = []) -> HTTPReply {
        var w = JSONWriter(capacity: 128)
        w.beginObject(); w.key("error"); w.string(message); w.endObject()
        return HTTPReply(status: status, contentType: "application/json",
                         headers: headers + [("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff")],
                         body: .bytes(w.bytes))
    }
}

private extension String {
    var trimmingWhitespace: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
