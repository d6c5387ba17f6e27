// Giving a burst's free memory back to the kernel. When thousands of clients connect or leave together (a restart,
// a network coming back), each leaves short-lived allocations freed between the connections' long-lived ones: malloc
// keeps those holes, resident, for good (docs/BENCHMARKS.md, "Memory per connection"). Once such a burst has settled,
// `malloc_trim` hands the free pages inside the heap back (a few hundred bytes per connection of a burst of 10,000).
// It locks malloc's arenas one at a time while it walks them, the loop's among them, so it runs off the loop, one at
// a time, only after a burst's worth of connections came or went, and never twice within ten seconds: anyone can open
// and close connections, and a client doing so in bursts must not make the hub walk its heap every other second (a
// trim after 10,000 connections at once took 6 ms here).
import Dispatch
import Glibc
import Synchronization

/// Decides, once a second, whether the connections opened and closed since the last trim call for one. Loop thread.
struct HeapTrimPolicy {
    /// Connections opened or closed since the last trim that make a trim worth it.
    var burst = 1_000
    /// A second with fewer changes than this is quiet: the burst has settled.
    var quiet = 10
    /// Seconds that must pass between two trims.
    var minimumGap = 10
    /// Seconds after the last trim after which a burst's worth of changes is trimmed without a quiet second.
    var longestWait = 300

    private var changesSinceTrim = 0
    private var lastChanges = 0
    /// Starts at `minimumGap`: the first burst after start-up need not wait.
    private var secondsSinceTrim: Int

    init() { secondsSinceTrim = minimumGap }

    /// Called once a second with the running count of connections opened plus closed; true: trim now.
    mutating func second(changes total: Int) -> Bool {
        let thisSecond = total - lastChanges
        lastChanges = total
        changesSinceTrim += thisSecond
        secondsSinceTrim += 1
        guard changesSinceTrim >= burst, secondsSinceTrim >= minimumGap,
            thisSecond < quiet || secondsSinceTrim >= longestWait
        else { return false }
        changesSinceTrim = 0
        secondsSinceTrim = 0
        return true
    }
}

/// Runs `malloc_trim` off the loop when `HeapTrimPolicy` says so, never two at once.
final class HeapTrim {
    private var policy = HeapTrimPolicy()
    private final class Running: Sendable {
        let flag = Atomic(false)
    }
    private let running = Running()

    /// glibc's `malloc_trim` (not in the Glibc module's headers); nil on a C library without it, where nothing is
    /// trimmed.
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()

    /// Once a second, on the loop: `changes` is the running count of connections opened plus closed.
    func second(changes: Int, trimmed: @escaping @Sendable (_ returnedBytes: Int64, _ milliseconds: Double) -> Void) {
        guard policy.second(changes: changes), Self.mallocTrim != nil else { return }
        guard running.flag.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        DispatchQueue.global(qos: .utility).async { [running = self.running] in
            let before = ResidentMemory.bytes() ?? 0
            let start = MonotonicTime.now()
            _ = HeapTrim.mallocTrim?(0)
            let end = MonotonicTime.now()
            let after = ResidentMemory.bytes() ?? before
            running.flag.store(false, ordering: .releasing)
            trimmed(before - after, Double(end - start) / 1e6)
        }
    }
}
