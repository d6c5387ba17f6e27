// `/v1/media` over plain HTTP on the hub's port: the HTTP face of the domain's `MediaLibrary`. `POST /v1/media`
// stores an upload from any signed-in user (guests too) and answers `201 {"media": "<id>"}` once the bytes and the
// row are committed; `GET /v1/media/<id>?exp&sig` serves media only to holders of a signed URL the hub issued.
// This file owns only the mapping: routes, the bearer header, status codes, headers, and the JSON `{"error": "..."}`
// body of every refusal. The transport runs it off the service thread and writes its replies.
public import CairnLoop
public import CairnMedia
import CairnWire

/// The HTTP service for uploading and serving media.
public struct MediaEndpoint: HTTPService {
    private let library: MediaLibrary

    /// Creates the endpoint over the media feature.
    public init(library: MediaLibrary) { self.library = library }

    /// An upload's token is checked on its headers: without a valid one the body is never read (401). Nor is a
    /// body whose declared length is over the live limit (413; the mount's own limit is the setting's ceiling).
    public func admit(_ request: HTTPRequest) async -> HTTPReply? {
        guard request.method == "POST" else { return nil }
        do {
            _ = try await library.uploader(token: Self.bearerToken(request.authorization))
        } catch {
            return Self.reply(to: error, uploading: true)
        }
        let limit = library.maxBytes
        if let length = request.contentLength, length > limit {
            return Self.reply(to: .tooLarge(limit: limit), uploading: true)
        }
        return nil
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
            let allow = request.path == prefix ? "POST" : "GET, HEAD"
            return Self.error(405, "method not allowed", headers: [("Allow", allow)])
        }
    }

    private func upload(_ request: HTTPRequest) async -> HTTPReply {
        do {
            let id = try await library.upload(
                request.body, contentType: request.contentType,
                token: Self.bearerToken(request.authorization))
            var w = JSONWriter(capacity: 96)
            w.beginObject()
            w.key("media")
            w.string(id)
            w.endObject()
            return HTTPReply(
                status: 201, contentType: "application/json", headers: [("Cache-Control", "no-store")],
                body: .bytes(w.bytes))
        } catch {
            return Self.reply(to: error, uploading: true)
        }
    }

    private func serve(id: String, query: String?) async -> HTTPReply {
        let download: MediaDownload
        do {
            download = try await library.download(id: id, query: query)
        } catch {
            return Self.reply(to: error, uploading: false)
        }
        guard let file = HTTPFile.open(path: download.media.path) else { return Self.error(404, "media not found") }
        let maxAge = download.validForMs / 1000
        var headers = [("Cache-Control", "private, max-age=\(maxAge)"), ("X-Content-Type-Options", "nosniff")]
        // `download=1` (a picture's `download_url`): the original, to be saved rather than shown.
        if Self.asksForAttachment(query) {
            let ext = download.media.contentType.split(separator: "/").last.map(String.init) ?? "bin"
            headers.append(("Content-Disposition", "attachment; filename=\"\(id.prefix(16)).\(ext)\""))
        }
        return HTTPReply(status: 200, contentType: download.media.contentType, headers: headers, body: .file(file))
    }

    /// True when the query holds `download=1`.
    static func asksForAttachment(_ query: String?) -> Bool {
        guard let query else { return false }
        return query.split(separator: "&").contains("download=1")
    }

    /// The token of an `Authorization: Bearer <token>` header (scheme case-insensitive, blanks trimmed); nil for
    /// a missing header or another scheme.
    static func bearerToken(_ authorization: String?) -> String? {
        guard let authorization else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1]).trimmingBlanks
    }

    /// The status, message and headers for each refusal.
    static func reply(to error: MediaError, uploading: Bool) -> HTTPReply {
        let challenge = [(name: "WWW-Authenticate", value: "Bearer")]
        switch error {
        case .missingToken: return Self.error(401, "bearer token required", headers: challenge)
        case .invalidToken: return Self.error(401, "invalid or revoked token", headers: challenge)
        case .suspended(let message): return Self.error(403, message)
        case .accountsUnavailable: return Self.error(500, "storage failure; try again")
        case .unsupportedType:
            let accepted = MediaType.allCases.map(\.rawValue).joined(separator: ", ")
            return Self.error(415, "content type must be one of " + accepted)
        case .tooLarge(let limit): return Self.error(413, "body exceeds \(limit) bytes")
        case .quotaExceeded(let limit):
            return Self.error(403, "your uploads would exceed your \(limit)-byte quota; delete relics that use media")
        case .contentMismatch(let type): return Self.error(415, "the body is not \(type.rawValue) data")
        case .link(let refusal): return Self.error(403, refusal == .expired ? "link expired" : "invalid link")
        case .notFound: return Self.error(404, "media not found")
        case .storageFailure:
            let outcome = uploading ? "the upload was not stored" : "try again"
            return Self.error(500, "storage failure; " + outcome)
        }
    }

    static func error(_ status: Int, _ message: String, headers: [(name: String, value: String)] = []) -> HTTPReply {
        var w = JSONWriter(capacity: 128)
        w.beginObject()
        w.key("error")
        w.string(message)
        w.endObject()
        return HTTPReply(
            status: status, contentType: "application/json",
            headers: headers + [("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff")],
            body: .bytes(w.bytes))
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingBlanks: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
