// A small tmpfs of a test's own, for storage faults: a disk that fills (its size is the limit) or a directory that
// cannot be written (mounted read-only). Mounting needs root (CAP_SYS_ADMIN): CI runs as root; elsewhere
// `isAvailable` is false and the tests that need it are skipped, saying so. Unmounted (lazily, so a process still
// inside cannot keep it) and removed when the object goes away.
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A tmpfs mounted on a fresh temporary directory.
public final class TmpfsMount: @unchecked Sendable {
    /// Where it is mounted.
    public let path: String

    /// True when this process can mount a tmpfs (root with CAP_SYS_ADMIN; tried once).
    public static let isAvailable: Bool = geteuid() == 0 && (try? TmpfsMount(bytes: 1 << 16)) != nil

    /// The message a test that needs it is skipped with.
    public static let unavailable = "mounting a tmpfs needs root (CAP_SYS_ADMIN); CI runs as root"

    /// Mounts a tmpfs of `bytes`, read-only when `readOnly` (then it stays empty).
    public init(bytes: Int, readOnly: Bool = false) throws {
        path = NSTemporaryDirectory() + "cairn-tmpfs-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        do {
            try Self.run(
                "/bin/mount", ["-t", "tmpfs", "-o", "size=\(bytes),mode=0755" + (readOnly ? ",ro" : ""), "tmpfs", path])
        } catch {
            try? FileManager.default.removeItem(atPath: path)
            throw error
        }
    }

    /// Fills what is left of it with a file (`fill` at `path`/fill), until the kernel says there is no space.
    public func fill() throws {
        let fd = open(path + "/fill", O_CREAT | O_WRONLY | O_APPEND, 0o600)
        guard fd >= 0 else {
            throw TestClientError.ioFailed("cannot create \(path)/fill: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0x5a, count: 4096)
        while true {
            let written = chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                guard errno == ENOSPC else {
                    throw TestClientError.ioFailed("writing \(path)/fill: \(String(cString: strerror(errno)))")
                }
                return
            }
        }
    }

    /// Gives back what `fill` took.
    public func empty() throws { try FileManager.default.removeItem(atPath: path + "/fill") }

    static func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw TestClientError.ioFailed("\(executable) \(arguments.joined(separator: " ")): \(text)")
        }
    }

    deinit {
        try? Self.run("/bin/umount", ["-l", path])
        try? FileManager.default.removeItem(atPath: path)
    }
}
