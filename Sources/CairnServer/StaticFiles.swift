// Files from directories on disk, over plain HTTP on the hub's port: the web app, the JavaScript client library and
// the browser libraries it uses. A generic service (it knows directories, names and headers, not what the files
// are for): the composition decides which directories are served under which paths, and which headers every answer
// carries (the Content-Security-Policy).
//
// Safety: a request never reaches a file outside its directory. The path is refused (404) when it holds a NUL, a
// backslash, a `%` (lws has decoded the path once; what is left encoded is an attempt at a second decoding), an empty
// segment, or a segment that begins with `.` (so `.`, `..` and hidden files such as `.git`); then the file's real
// path, symbolic links resolved, must lie inside the directory's real path, and the last component is opened without
// following a link. Files are opened off the service thread (services run in tasks) and sent in slices by the
// transport. A directory named without its trailing `/` (`/admin`) is answered `301` to `/admin/` when it holds an
// `index.html`, so the page's relative links resolve inside it.
public import CairnLoop
import Foundation

/// The HTTP service for static files (see the top of this file for the rules).
public struct StaticFiles: HTTPService {
    /// A directory served under a path prefix.
    public struct Root: Sendable {
        /// The path prefix, `/` or ending in `/` (e.g. `/vendor/leaflet/`).
        public var prefix: String
        /// The directory.
        public var directory: String
        /// If set, only these names (relative to the directory) are served, e.g. `["cairn.js", "cairn.d.ts"]`.
        public var only: Set<String>?
        /// Seconds a browser may keep a file without asking again; 0: it revalidates every time (`no-cache`).
        public var maxAgeSeconds: Int

        /// Creates a root.
        public init(prefix: String, directory: String, only: Set<String>? = nil, maxAgeSeconds: Int = 0) {
            self.prefix = prefix
            self.directory = directory
            self.only = only
            self.maxAgeSeconds = maxAgeSeconds
        }
    }

    /// A document held in memory (e.g. a configuration made at start), served at an exact path.
    public struct Document: Sendable {
        /// The exact path, e.g. `/config.json`.
        public var path: String
        /// The `Content-Type`.
        public var contentType: String
        /// The bytes.
        public var body: [UInt8]

        /// Creates a document.
        public init(path: String, contentType: String, body: [UInt8]) {
            self.path = path
            self.contentType = contentType
            self.body = body
        }
    }

    /// The file served for a path that ends in `/`.
    public static let indexName = "index.html"

    let roots: [Root]
    let documents: [String: (document: Document, tag: String)]
    let headers: @Sendable (HTTPRequest) -> [(name: String, value: String)]

    /// Serves `roots` (the longest matching prefix wins) and `documents` (before any root); `headers` gives the
    /// headers every answer carries besides the type, caching and `X-Content-Type-Options`.
    public init(
        roots: [Root], documents: [Document] = [],
        headers: @escaping @Sendable (HTTPRequest) -> [(name: String, value: String)] = { _ in [] }
    ) {
        // Longest prefix first; among equal prefixes, roots limited to a few names before the open ones.
        self.roots = roots.enumerated().sorted { a, b in
            if a.element.prefix.count != b.element.prefix.count {
                return a.element.prefix.count > b.element.prefix.count
            }
            if (a.element.only != nil) != (b.element.only != nil) { return a.element.only != nil }
            return a.offset < b.offset
        }.map(\.element)
        var byPath: [String: (document: Document, tag: String)] = [:]
        for document in documents {
            byPath[document.path] = (document, "\"d-" + String(Self.fnv1a(document.body), radix: 16) + "\"")
        }
        self.documents = byPath
        self.headers = headers
    }

    /// Refuses a body before it is read: no method that carries one is allowed here.
    public func admit(_ request: HTTPRequest) async -> HTTPReply? {
        Self.notFoundOrNotAllowed(
            exists: document(for: request.path) != nil || resolve(request.path) != nil
                || directoryLocation(request.path) != nil)
    }

    /// Answers GET and HEAD with the file (or 304 when the client's copy is current); 404 for what is not there
    /// or may not be served, 405 for other methods on what is.
    public func handle(_ request: HTTPRequest) async -> HTTPReply {
        if let (document, tag) = document(for: request.path) {
            if let refusal = Self.notFoundOrNotAllowed(exists: true, method: request.method) { return refusal }
            return answer(
                request, contentType: document.contentType, tag: tag, cache: "no-cache", body: .bytes(document.body))
        }
        if let location = directoryLocation(request.path) {
            if let refusal = Self.notFoundOrNotAllowed(exists: true, method: request.method) { return refusal }
            var all: [(name: String, value: String)] = [
                ("Location", location), ("Cache-Control", "no-cache"), ("X-Content-Type-Options", "nosniff"),
            ]
            all += headers(request)
            return HTTPReply(status: 301, contentType: "text/plain; charset=utf-8", headers: all, body: .bytes([]))
        }
        guard let (path, root) = resolve(request.path), let file = HTTPFile.open(path: path, followingSymlinks: false)
        else { return Self.notFoundOrNotAllowed(exists: false)! }
        if let refusal = Self.notFoundOrNotAllowed(exists: true, method: request.method) { return refusal }
        let tag =
            "\"" + String(file.inode, radix: 16) + "-" + String(file.size, radix: 16) + "-"
            + String(file.modifiedNanoseconds, radix: 16) + "\""
        let type = Self.contentType(of: path)
        let cache =
            root.maxAgeSeconds > 0 && !type.hasPrefix("text/html")
            ? "public, max-age=\(root.maxAgeSeconds)" : "no-cache"
        return answer(request, contentType: type, tag: tag, cache: cache, body: .file(file))
    }

    // MARK: Answers

    private func answer(
        _ request: HTTPRequest, contentType: String, tag: String, cache: String, body: HTTPReplyBody
    ) -> HTTPReply {
        var all: [(name: String, value: String)] = [
            ("ETag", tag), ("Cache-Control", cache), ("X-Content-Type-Options", "nosniff"),
        ]
        all += headers(request)
        if let held = request.ifNoneMatch, Self.matches(held, tag) {
            return HTTPReply(status: 304, contentType: contentType, headers: all, body: .bytes([]))
        }
        return HTTPReply(status: 200, contentType: contentType, headers: all, body: body)
    }

    /// nil when the method is allowed on something that exists; else the refusal, 404 before 405.
    private static func notFoundOrNotAllowed(exists: Bool, method: String = "POST") -> HTTPReply? {
        let json = "application/json"
        let nosniff = ("X-Content-Type-Options", "nosniff")
        guard exists else {
            return HTTPReply(
                status: 404, contentType: json, headers: [("Cache-Control", "no-store"), nosniff],
                body: .bytes(Array(#"{"error":"not found"}"#.utf8)))
        }
        if method == "GET" || method == "HEAD" { return nil }
        return HTTPReply(
            status: 405, contentType: json, headers: [("Allow", "GET, HEAD"), ("Cache-Control", "no-store"), nosniff],
            body: .bytes(Array(#"{"error":"method not allowed"}"#.utf8)))
    }

    /// Whether an `If-None-Match` value names `tag` (weak comparison, as RFC 9110 asks for this header).
    static func matches(_ held: String, _ tag: String) -> Bool {
        held.split(separator: ",").contains { part in
            var candidate = part.trimmingCharacters(in: .whitespaces)
            if candidate == "*" { return true }
            if candidate.hasPrefix("W/") { candidate.removeFirst(2) }
            return candidate == tag
        }
    }

    // MARK: Paths

    private func document(for path: String) -> (Document, String)? {
        documents[path].map { ($0.document, $0.tag) }
    }

    /// The real path of the file `requestPath` names and its root, or nil if it names nothing servable. The first
    /// root whose prefix matches and that admits the name decides.
    func resolve(_ requestPath: String) -> (String, Root)? {
        for root in roots where requestPath.hasPrefix(root.prefix) {
            var relative = String(requestPath.dropFirst(root.prefix.count))
            if relative.isEmpty || relative.hasSuffix("/") { relative += Self.indexName }
            if let only = root.only, !only.contains(relative) { continue }
            guard Self.isPlain(relative), let base = Self.realPath(root.directory),
                let found = Self.realPath(base + "/" + relative), found.hasPrefix(base == "/" ? "/" : base + "/")
            else { return nil }
            return (found, root)
        }
        return nil
    }

    /// `path` + `/` when `path` names a served directory holding an index (without the `/`), else nil. Only for
    /// paths of visible ASCII, so nothing the client sent can break the `Location` header.
    func directoryLocation(_ path: String) -> String? {
        guard path.count > 1, !path.hasSuffix("/"), path.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }),
            resolve(path + "/") != nil
        else { return nil }
        return path + "/"
    }

    /// True for a relative path of plain segments: no NUL, `\`, `%`, empty segment or segment starting with `.`.
    static func isPlain(_ relative: String) -> Bool {
        if relative.utf8.contains(where: { $0 == 0 || $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "%") }) {
            return false
        }
        return relative.split(separator: "/", omittingEmptySubsequences: false).allSatisfy {
            !$0.isEmpty && !$0.hasPrefix(".")
        }
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    // MARK: Types

    /// Content types by file extension; anything else is `application/octet-stream`.
    static let types: [String: String] = [
        "html": "text/html; charset=utf-8", "htm": "text/html; charset=utf-8",
        "js": "text/javascript; charset=utf-8", "mjs": "text/javascript; charset=utf-8",
        "css": "text/css; charset=utf-8", "json": "application/json", "geojson": "application/geo+json",
        "map": "application/json", "svg": "image/svg+xml", "png": "image/png", "jpg": "image/jpeg",
        "jpeg": "image/jpeg", "webp": "image/webp", "gif": "image/gif", "ico": "image/x-icon",
        "txt": "text/plain; charset=utf-8", "ts": "text/plain; charset=utf-8", "woff2": "font/woff2",
        "woff": "font/woff",
    ]

    /// The content type for a file name.
    static func contentType(of path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: ".") else { return "application/octet-stream" }
        return types[name[name.index(after: dot)...].lowercased()] ?? "application/octet-stream"
    }

    private static func fnv1a(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }
}
