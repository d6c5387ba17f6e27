import Foundation
import Synchronization

// One writer per data directory. Two hubs on the same directory would both start, each with its own memory, and
// overwrite each other's snapshots; `cairn seed` writing beside a running hub would add users the hub's memory never
// hears of. So `serve` and every command that must not run beside a hub hold an exclusive `flock` on
// `<data>/cairn.lock` for as long as they run, with their pid and purpose in the file; a second one is refused with
// a message naming the holder. The kernel drops the lock when the process exits, kill -9 included, so a stale file
// never blocks a start. The file itself is never deleted (deleting a lock file races with the next locker).
// Commands made to run beside a hub (`user grant-ops`, `backup`) do not take it.
#if canImport(Glibc)
import Glibc
#endif

/// Why the data directory could not be locked.
public enum DataDirectoryLockError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Another process holds the lock: its pid and purpose ("a hub", "cairn seed"), as far as they could be read.
    case held(directory: String, pid: Int32?, purpose: String?)
    /// The directory or the lock file could not be created or opened.
    case unusable(path: String, reason: String)

    /// A readable explanation.
    public var description: String {
        switch self {
        case .held(let directory, let pid, let purpose):
            "data directory \(directory) is in use by \(purpose ?? "another cairn process") "
                + "(pid \(pid.map(String.init) ?? "unknown")); stop it first, or use another data directory"
        case .unusable(let path, let reason): "cannot lock \(path): \(reason)"
        }
    }
}

/// An exclusive lock on a data directory, held until `release()` or until this object goes away.
public final class DataDirectoryLock: Sendable {
    /// The lock file's name inside the data directory.
    public static let fileName = "cairn.lock"

    /// The lock file.
    public let path: String
    private let descriptor: Int32
    private let held = Mutex(true)

    /// Creates the directory if needed (mode 0700) and takes the lock without waiting. The file then holds the pid
    /// on its first line and `purpose` (e.g. "a hub", "cairn seed") on the second, for whoever is refused. Throws
    /// `DataDirectoryLockError`.
    public init(directory: String, purpose: String) throws(DataDirectoryLockError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw .unusable(path: directory, reason: "exists and is not a directory")
        }
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            throw .unusable(path: directory, reason: error.localizedDescription)
        }
        path = (directory as NSString).appendingPathComponent(Self.fileName)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .unusable(path: path, reason: String(cString: strerror(errno))) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let failure = errno
            let holder = Self.holder(fd)
            close(fd)
            if failure == EWOULDBLOCK { throw .held(directory: directory, pid: holder.pid, purpose: holder.purpose) }
            throw .unusable(path: path, reason: String(cString: strerror(failure)))
        }
        descriptor = fd
        let text = Array("\(getpid())\n\(purpose)\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    /// Gives the lock up (closing the file); later calls do nothing.
    public func release() {
        let wasHeld = held.withLock { held in
            defer { held = false }
            return held
        }
        if wasHeld { close(descriptor) }
    }

    deinit { release() }

    /// The pid and purpose the holder wrote; nil parts when the file is empty or partly written (a holder between
    /// truncating and writing it).
    private static func holder(_ fd: Int32) -> (pid: Int32?, purpose: String?) {
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return (nil, nil) }
        let lines = String(decoding: buffer.prefix(count), as: UTF8.self).split(separator: "\n").map(String.init)
        let purpose = lines.count > 1 && !lines[1].isEmpty ? lines[1] : nil
        return (lines.first.flatMap { Int32($0) }, purpose)
    }
}
