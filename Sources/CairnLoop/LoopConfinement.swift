// Loop confinement, asserted rather than only stated. Live state (connections, positions, relics, the op table's
// per-connection queues) belongs to one thread; every entry point that touches it calls `assertOnLoop()`. In debug
// builds that is a precondition against the thread that claimed the loop (the transport's service thread, or the
// test thread that plays it); in release builds it compiles to nothing, so the hot path pays nothing.
//
// The owner is claimed explicitly (`claim()`), by whoever runs the loop, before the first event. Until a thread
// claims it nothing is asserted, so types can be built and wired on any thread.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The identity of the thread that owns live state, checked in debug builds.
public final class LoopConfinement: @unchecked Sendable {
    // Written once by `claim` (before the loop starts serving) and read on the loop; never raced in practice,
    // and only read at all in debug builds.
    private var owner: pthread_t?
    /// A description used in the failure message (e.g. "the hub's service thread").
    public let name: String

    /// Creates an unclaimed confinement.
    public init(name: String) { self.name = name }

    /// Makes the calling thread the owner. Call on the loop thread before it serves anything.
    public func claim() { owner = pthread_self() }

    /// Releases ownership (the loop stopped); later calls from any thread are not checked.
    public func release() { owner = nil }

    /// True when no thread owns the loop or the calling thread does.
    public var isOnLoop: Bool {
        guard let owner else { return true }
        return pthread_equal(owner, pthread_self()) != 0
    }

    /// Traps in debug builds when called off the owning thread; nothing in release builds.
    @inline(__always)
    public func assertOnLoop(file: StaticString = #fileID, line: UInt = #line) {
        #if DEBUG
        precondition(isOnLoop, "called off \(name)", file: file, line: line)
        #endif
    }
}
