// The process's resident memory for operators (stats channel, /metrics). Linux exposes it in /proc/self/statm
// (second field, in pages): a tiny procfs read served from kernel memory, never from disk, so reading it on the
// loop once a second or per scrape costs microseconds. Elsewhere it is unknown (nil).
#if canImport(Glibc)
import Glibc
#endif

enum ResidentMemory {
    /// Resident set size in bytes, or nil when it cannot be read.
    static func bytes() -> Int64? {
        #if os(Linux)
        let fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return nil }
        let fields = buffer[0..<n].split(separator: UInt8(ascii: " "))
        guard fields.count >= 2, let pages = Int64(String(decoding: fields[1], as: UTF8.self)) else { return nil }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
        #else
        return nil
        #endif
    }
}
