public import CairnCrypto
import Foundation

// The secret that signs media URLs: 32 random bytes in `<data>/media.key`, created once (mode 0600) and read on
// every later start, so URLs handed out before a restart keep working until they expire. The file appears
// atomically: it is written under a temporary name, fsynced and hard-linked into place, and link() fails if
// another process got there first, in which case that secret wins and is read back.
#if canImport(Glibc)
import Glibc
#endif

/// Loading (or creating at first start) the media URL secret.
public enum MediaSecret {
    /// The file name inside the data directory.
    public static let fileName = "media.key"
    /// Bytes in the secret.
    public static let length = 32

    /// Reads `<directory>/media.key`, creating it from `random` if it does not exist.
    public static func loadOrCreate(directory: String, random: any RandomSource) throws(MediaFileError) -> [UInt8] {
        let path = directory + "/" + fileName
        if let existing = try read(path) { return existing }
        var template = Array("\(directory)/.media.key-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard fd >= 0 else { throw MediaFileError("cannot create", path: temporary) }
        defer { unlink(temporary) }
        let secret = random.bytes(length)
        let written = secret.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == length, synced else { throw MediaFileError("cannot write", path: temporary) }
        if link(temporary, path) != 0 {
            guard errno == EEXIST, let theirs = try read(path) else {
                throw MediaFileError("cannot create", path: path)
            }
            return theirs
        }
        try MediaFiles.syncDirectory(directory)
        return secret
    }

    private static func read(_ path: String) throws(MediaFileError) -> [UInt8]? {
        let fd = open(path, O_RDONLY)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw MediaFileError("cannot open", path: path)
        }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: length + 1)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard n == length else {
            throw MediaFileError("expected \(length) bytes in", path: path, code: n < 0 ? errno : EINVAL)
        }
        return Array(buffer.prefix(length))
    }
}
