// A node's local copy of shared media. With several nodes the bytes of an upload live in PostgreSQL (committed with
// the row, so any node can serve what any node accepted); serving hands the transport a file path, so each node
// keeps the bytes it serves in a directory of its own: `<root>/ab/<id>`, `<id>` the lowercase hex SHA-256 of the
// content. Nothing here is the truth: a missing, partial or stray file is fetched again or removed, so a file need
// not survive a crash, only never be seen half-written (written to `<root>/tmp/`, fsynced, renamed into place). The
// directories are private (0700, files 0600) and must belong to this process's user: a cache others could write
// would let them choose what this node serves. (CairnStore's MediaFiles does the same for one node's durable files;
// this module may not import it, and a cache needs less: no directory fsyncs, no age rules.)
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A failure reading or writing the media cache.
public struct MediaCacheError: Error, CustomStringConvertible, Sendable {
    /// What was being done and the system's explanation.
    public let description: String

    init(_ what: String, path: String, code: Int32 = errno) {
        description = "\(what) '\(path)': \(String(cString: strerror(code)))"
    }
}

/// Content-addressed copies of media in one private directory tree.
struct MediaCache: Sendable {
    /// The root directory.
    let root: String
    private var temporaryDirectory: String { root + "/tmp" }

    /// The default root when none is given: per user under the system's temporary directory.
    static var defaultRoot: String {
        (NSTemporaryDirectory() as NSString).appendingPathComponent("cairn-media-cache-\(getuid())")
    }

    /// Uses (creating if needed) `root` and its temporary folder; throws when either belongs to another user.
    init(root: String) throws(MediaCacheError) {
        self.root = root
        try Self.makePrivateDirectory(root)
        try Self.makePrivateDirectory(root + "/tmp")
    }

    /// Where the content with `id` is cached (whether or not it is).
    func path(for id: String) -> String {
        "\(root)/\(id.prefix(2))/\(id)"
    }

    /// Whether a complete copy of `id`, `size` bytes, is in place.
    func contains(_ id: String, size: Int) -> Bool {
        var info = stat()
        return stat(path(for: id), &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && Int(info.st_size) == size
    }

    /// Puts `bytes` in place under `id`, unless a complete copy is there already.
    func write(_ id: String, bytes: [UInt8]) throws(MediaCacheError) {
        if contains(id, size: bytes.count) { return }
        var template = Array("\(temporaryDirectory)/fetch-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard fd >= 0 else { throw MediaCacheError("cannot create", path: temporary) }
        var renamed = false
        defer { if !renamed { unlink(temporary) } }
        do {
            defer { close(fd) }
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw MediaCacheError("cannot write", path: temporary)
                }
                offset += n
            }
            // Without it a crash could leave the name with the right size and the wrong bytes (a file's blocks
            // may reach the disk after its rename).
            guard fsync(fd) == 0 else { throw MediaCacheError("cannot fsync", path: temporary) }
        }
        try Self.makePrivateDirectory("\(root)/\(id.prefix(2))")
        let final = path(for: id)
        guard rename(temporary, final) == 0 else { throw MediaCacheError("cannot rename into", path: final) }
        renamed = true
    }

    /// Removes the copy of `id` if present.
    func remove(_ id: String) {
        unlink(path(for: id))
    }

    /// Ids of every copy present.
    func ids() -> [String] {
        let fm = FileManager.default
        var found: [String] = []
        for shard in (try? fm.contentsOfDirectory(atPath: root)) ?? [] where shard.count == 2 {
            for name in (try? fm.contentsOfDirectory(atPath: "\(root)/\(shard)")) ?? []
            where name.hasPrefix(shard) && name.count == 64 {
                found.append(name)
            }
        }
        return found
    }

    /// Deletes temporary files left by writes that never finished (a crash), older than `cutoffMs`.
    func removeTemporaries(modifiedBefore cutoffMs: Int64) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temporaryDirectory)) ?? [] {
            let file = "\(temporaryDirectory)/\(name)"
            var info = stat()
            guard stat(file, &info) == 0 else { continue }
            let modified = Int64(info.st_mtim.tv_sec) * 1000 + Int64(info.st_mtim.tv_nsec) / 1_000_000
            if modified < cutoffMs { unlink(file) }
        }
    }

    /// Creates `path` with mode 0700, or checks the existing one is a directory (not a link to one) of this user and
    /// makes it private.
    private static func makePrivateDirectory(_ path: String) throws(MediaCacheError) {
        if mkdir(path, 0o700) == 0 { return }
        guard errno == EEXIST else { throw MediaCacheError("cannot create directory", path: path) }
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw MediaCacheError("not a directory", path: path, code: ENOTDIR)
        }
        guard info.st_uid == getuid() else { throw MediaCacheError("belongs to another user", path: path, code: EPERM) }
        if info.st_mode & 0o077 != 0, chmod(path, 0o700) != 0 {
            throw MediaCacheError("cannot make private", path: path)
        }
    }
}
