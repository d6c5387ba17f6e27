import Foundation

// The bytes of uploaded media, content-addressed under the data directory: `media/ab/<id>` where `<id>` is the
// lowercase hex SHA-256 of the content and `ab` its first two digits (so no directory grows huge). Identical
// uploads share one file. A file appears atomically and durably: it is written to `media/tmp/`, fsynced, renamed
// into place and the directory fsynced, so after a crash a name either holds the whole content or does not exist.
// Which files are still wanted is the database's business (SQLiteStore+Media.swift); this type only moves bytes.
#if canImport(Glibc)
import Glibc
#endif

/// A failure reading or writing media files.
public struct MediaFileError: Error, CustomStringConvertible, Sendable {
    /// What was being done and the system's explanation.
    public let description: String

    init(_ what: String, path: String, code: Int32 = errno) {
        description = "\(what) '\(path)': \(String(cString: strerror(code)))"
    }
}

/// Content-addressed media files in one directory tree.
public struct MediaFiles: Sendable {
    /// The root directory (`<data>/media`).
    public let root: String
    private var temporaryDirectory: String { root + "/tmp" }

    /// Uses (creating if needed, mode 0700) `root` and its temporary folder.
    public init(root: String) throws(MediaFileError) {
        self.root = root
        try Self.makeDirectory(root)
        try Self.makeDirectory(root + "/tmp")
    }

    /// Where the content with `id` lives (whether or not it exists).
    public func path(for id: String) -> String {
        "\(root)/\(id.prefix(2))/\(id)"
    }

    /// Whether a complete file for `id` of `size` bytes is in place.
    public func contains(_ id: String, size: Int) -> Bool {
        var info = stat()
        return stat(path(for: id), &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && Int(info.st_size) == size
    }

    /// Puts `bytes` in place under `id` durably, unless a complete file is there already. Returns whether it wrote.
    @discardableResult
    public func write(_ id: String, bytes: [UInt8]) throws(MediaFileError) -> Bool {
        if contains(id, size: bytes.count) { return false }
        var template = Array("\(temporaryDirectory)/upload-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard fd >= 0 else { throw MediaFileError("cannot create", path: temporary) }
        var renamed = false
        defer { if !renamed { unlink(temporary) } }
        do {
            defer { close(fd) }
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw MediaFileError("cannot write", path: temporary)
                }
                offset += n
            }
            guard fsync(fd) == 0 else { throw MediaFileError("cannot fsync", path: temporary) }
        }
        let shard = "\(root)/\(id.prefix(2))"
        try Self.makeDirectory(shard)
        let final = path(for: id)
        guard rename(temporary, final) == 0 else { throw MediaFileError("cannot rename into", path: final) }
        renamed = true
        try Self.syncDirectory(shard)
        return true
    }

    /// Removes the file for `id` if present (and makes the removal durable).
    public func remove(_ id: String) throws(MediaFileError) {
        let file = path(for: id)
        if unlink(file) != 0 {
            if errno == ENOENT { return }
            throw MediaFileError("cannot remove", path: file)
        }
        try Self.syncDirectory("\(root)/\(id.prefix(2))")
    }

    /// Ids of the files present whose modification time is before `cutoffMs` (milliseconds since the epoch).
    public func ids(modifiedBefore cutoffMs: Int64) -> [String] {
        let fm = FileManager.default
        var found: [String] = []
        for shard in (try? fm.contentsOfDirectory(atPath: root)) ?? [] where shard.count == 2 {
            for name in (try? fm.contentsOfDirectory(atPath: "\(root)/\(shard)")) ?? []
            where name.hasPrefix(shard) && name.count == 64 {
                if modifiedMs("\(root)/\(shard)/\(name)").map({ $0 < cutoffMs }) ?? false { found.append(name) }
            }
        }
        return found
    }

    /// Deletes temporary files left by uploads that never finished (a crash), older than `cutoffMs`.
    @discardableResult
    public func removeTemporaries(modifiedBefore cutoffMs: Int64) -> Int {
        var removed = 0
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temporaryDirectory)) ?? [] {
            let file = "\(temporaryDirectory)/\(name)"
            if modifiedMs(file).map({ $0 < cutoffMs }) ?? false, unlink(file) == 0 { removed += 1 }
        }
        return removed
    }

    private func modifiedMs(_ file: String) -> Int64? {
        var info = stat()
        guard stat(file, &info) == 0 else { return nil }
        return Int64(info.st_mtim.tv_sec) * 1000 + Int64(info.st_mtim.tv_nsec) / 1_000_000
    }

    private static func makeDirectory(_ path: String) throws(MediaFileError) {
        if mkdir(path, 0o700) == 0 {
            // The new name must survive a crash too.
            try syncDirectory((path as NSString).deletingLastPathComponent)
            return
        }
        var info = stat()
        guard errno == EEXIST, stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw MediaFileError("cannot create directory", path: path)
        }
    }

    static func syncDirectory(_ path: String) throws(MediaFileError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { throw MediaFileError("cannot open directory", path: path) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw MediaFileError("cannot fsync directory", path: path) }
    }
}
