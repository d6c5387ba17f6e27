// An ev_timer on the hub's libev loop with a Swift closure: fires on the loop thread, like every Redis callback,
// so the code it runs touches live state without locks. Create, use and drop it on the loop thread.
import CHiredis

/// A one-shot or repeating timer on a libev loop.
public final class LoopTimer {
    private let loop: UnsafeMutableRawPointer
    private var timer: UnsafeMutableRawPointer?
    private let fire: () -> Void

    /// A stopped timer that calls `fire` on `loop`.
    public init(loop: UnsafeMutableRawPointer, _ fire: @escaping () -> Void) {
        self.loop = loop
        self.fire = fire
        timer = cairn_ev_timer_new(nil, loopTimerFired)
        // The owner pointer is set after init (self is not available before).
        cairn_ev_timer_set_owner(timer, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Starts (or restarts) it: first after `after` seconds, then every `repeat` seconds (0: once).
    public func start(after: Double, repeat: Double = 0) {
        cairn_ev_timer_start(loop, timer, max(after, 0), max(`repeat`, 0))
    }

    /// Stops it; start may be called again.
    public func stop() { cairn_ev_timer_stop(loop, timer) }

    fileprivate func fired() { fire() }

    deinit { cairn_ev_timer_free(loop, timer) }
}

private func loopTimerFired(_ owner: UnsafeMutableRawPointer?) {
    guard let owner else { return }
    Unmanaged<LoopTimer>.fromOpaque(owner).takeUnretainedValue().fired()
}
