// A gate for fakes: store work waits at it until the test opens it, so the test can act while a write is held
// before it commits (the loop's own jobs are held with `CollectingScheduler.hold` instead).
import Synchronization

/// Closed until opened; once open, never waits again.
public final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    /// Creates a closed gate.
    public init() {}

    /// Waits until the gate is open.
    public func wait() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let open = state.withLock { s in
                if !s.open { s.waiters.append(waiter) }
                return s.open
            }
            if open { waiter.resume() }
        }
    }

    /// Opens the gate: whoever waits goes on.
    public func open() {
        let waiting = state.withLock { s in
            s.open = true
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiting { waiter.resume() }
    }
}
