// libwebsockets sizes its descriptor table from the soft RLIMIT_NOFILE when the context is created, and Debian's
// default soft limit is 1024: far too few for a hub. Raise the soft limit towards the hard one before starting.
import Glibc

/// The process's open-file limit.
public enum FileLimit {
    /// Raises the soft limit to `min(target, hard)` and returns the limit now in force.
    @discardableResult
    public static func raise(to target: UInt64) -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        let wanted = min(rlim_t(target), limit.rlim_max)
        if limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = wanted
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return UInt64(wanted) }
        }
        return UInt64(limit.rlim_cur)
    }
}
