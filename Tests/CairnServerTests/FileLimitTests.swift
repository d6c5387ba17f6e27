import Glibc
import Testing

// The open-file limit is raised towards the hard limit before libwebsockets sizes its tables.
@testable import CairnServer

@Suite(.timeLimit(.minutes(5)))
struct FileLimitTests {
    @Test func raisesTheSoftLimitUpToTheHardLimit() {
        var before = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &before)
        let target = UInt64(min(before.rlim_max, 4096))
        let result = FileLimit.raise(to: target)
        var after = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &after)
        #expect(UInt64(after.rlim_cur) >= target)
        #expect(result == UInt64(after.rlim_cur))
        #expect(after.rlim_max == before.rlim_max)
    }
}
