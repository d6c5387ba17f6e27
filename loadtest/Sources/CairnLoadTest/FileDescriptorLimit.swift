// Thousands of sockets need thousands of descriptors, and Debian's soft limit is 1024. The tool raises its own
// limit before it opens anything: soft and hard together when it may (root), else the soft one up to the hard one.
import Glibc

/// The process's open-file limit.
public enum FileDescriptorLimit {
    /// Raises RLIMIT_NOFILE towards `target` and returns the soft limit now in force.
    @discardableResult
    public static func raise(to target: UInt64) -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur >= rlim_t(target) { return UInt64(limit.rlim_cur) }
        if limit.rlim_max < rlim_t(target) {
            var both = rlimit(rlim_cur: rlim_t(target), rlim_max: rlim_t(target))
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &both) == 0 { return target }
        }
        var soft = limit
        soft.rlim_cur = min(rlim_t(target), limit.rlim_max)
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &soft) == 0 { return UInt64(soft.rlim_cur) }
        return UInt64(limit.rlim_cur)
    }
}
