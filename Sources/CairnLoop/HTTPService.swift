// How plain HTTP requests reach the rest of the program without either side knowing the other. A service answers
// complete requests; the transport (CairnServer) mounts services on path prefixes, assembles each request (headers
// and, for POST/PUT/PATCH, the whole body within the mount's byte limit) on the service thread, calls `handle` in a
// task off that thread, and writes the reply when it comes back. These types live in the seam module so a service
// can be written, and tested, without depending on the transport.
#if canImport(Glibc)
import Glibc
#endif

/// A request as the transport hands it to a service.
public struct HTTPRequest: Sendable {
    /// The method in capitals: `GET`, `HEAD`, `POST`, `PUT`, `PATCH`, `DELETE` or `OPTIONS`.
    public var method: String
    /// The path without the query string, e.g. `/v1/media/ab12…`.
    public var path: String
    /// The query string without `?` (arguments joined by `&`), or nil if there was none.
    public var query: String?
    /// The `Authorization` header, if sent.
    public var authorization: String?
    /// The `Content-Type` header, if sent.
    public var contentType: String?
    /// The declared `Content-Length`, if sent.
    public var contentLength: Int?
    /// The `Host` header, if sent (what the client believes it is talking to; never trusted for access).
    public var host: String?
    /// The `If-None-Match` header, if sent (entity tags of copies the client holds).
    public var ifNoneMatch: String?
    /// The complete body (empty for requests without one).
    public var body: [UInt8]

    /// Creates a request (the transport builds these; tests of a service may too).
    public init(
        method: String, path: String, query: String? = nil, authorization: String? = nil,
        contentType: String? = nil, contentLength: Int? = nil, host: String? = nil, ifNoneMatch: String? = nil,
        body: [UInt8] = []
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.authorization = authorization
        self.contentType = contentType
        self.contentLength = contentLength
        self.host = host
        self.ifNoneMatch = ifNoneMatch
        self.body = body
    }
}

/// An open file a reply streams from; the descriptor is closed when the last reference goes away, so a reply
/// dropped because its client hung up leaks nothing.
public final class HTTPFile: Sendable {
    /// The open, read-only descriptor.
    public let descriptor: Int32
    /// Bytes to send (the file's size when opened).
    public let size: Int
    /// The file's inode and last modification (nanoseconds since 1970) when opened: with `size`, what tells one
    /// version of a file from another (entity tags).
    public let inode: UInt64
    public let modifiedNanoseconds: Int64

    private init(descriptor: Int32, size: Int, inode: UInt64, modifiedNanoseconds: Int64) {
        self.descriptor = descriptor
        self.size = size
        self.inode = inode
        self.modifiedNanoseconds = modifiedNanoseconds
    }

    /// Opens a regular file for reading; nil if it does not exist or is not a regular file. With
    /// `followingSymlinks` false, a path whose last component is a symbolic link is refused too. Opened non-blocking,
    /// so that a FIFO (which would wait for a writer) or a device is refused at once instead of holding the thread.
    public static func open(path: String, followingSymlinks: Bool = true) -> HTTPFile? {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (followingSymlinks ? 0 : O_NOFOLLOW))
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            return nil
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        let modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        return HTTPFile(
            descriptor: fd, size: Int(info.st_size), inode: UInt64(info.st_ino), modifiedNanoseconds: modified)
    }

    deinit { close(descriptor) }
}

/// What a reply carries.
public enum HTTPReplyBody: Sendable {
    /// Bytes in memory.
    case bytes([UInt8])
    /// An open file, sent in slices across writable callbacks.
    case file(HTTPFile)

    /// Bytes the body holds (a file's size when it was opened).
    public var count: Int {
        switch self {
        case .bytes(let bytes): bytes.count
        case .file(let file): file.size
        }
    }
}

/// A service's answer.
public struct HTTPReply: Sendable {
    /// The status code.
    public var status: Int
    /// The `Content-Type`.
    public var contentType: String
    /// Further headers, e.g. `("Cache-Control", "no-store")`.
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: HTTPReplyBody

    /// Creates a reply.
    public init(status: Int, contentType: String, headers: [(name: String, value: String)] = [], body: HTTPReplyBody) {
        self.status = status
        self.contentType = contentType
        self.headers = headers
        self.body = body
    }
}

/// Handles the requests under one path prefix. Called off the service thread; may take its time.
public protocol HTTPService: Sendable {
    /// Decides from a request's headers alone (its body is empty here) whether its body may be read at all: nil
    /// admits it; a reply refuses it before a byte of the body is read or any of the server's body budget is
    /// reserved for it (e.g. 401 for a missing or unknown token). Called for requests that carry a body.
    func admit(_ request: HTTPRequest) async -> HTTPReply?
    /// Answers one complete request.
    func handle(_ request: HTTPRequest) async -> HTTPReply
}

extension HTTPService {
    /// Admits every request (services whose bodies anyone may send).
    public func admit(_ request: HTTPRequest) async -> HTTPReply? { nil }
}
