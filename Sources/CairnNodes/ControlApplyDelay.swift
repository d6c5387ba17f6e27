// A test-only knob: with `cairn serve --cluster-apply-delay-ms=N` (a hidden flag; `ClusterConfiguration.applyDelayMs`),
// a node handles each control message from another node N ms after it arrived, in arrival order, and so
// acknowledges it that late. It lets an integration test prove that a hide or an unfriend is answered only after
// every other node applied it (the answer cannot come before the slow node's acknowledgement), not merely that the
// outcome is right. Never a configuration option, never read from the environment; the node logs a warning when it
// is set. Loop thread only.
import CairnCluster

/// Control messages held back for a fixed time, then handed on in the order they arrived.
final class ControlApplyDelay {
    private let delayMs: Int64
    private let now: () -> Int64
    private let handle: (ControlMessage) -> Void
    private var queue: [(due: Int64, message: ControlMessage)] = []
    private var head = 0
    private var timer: LoopTimer?

    /// Hands each message to `handle` `delayMs` after `hold` received it, on `loop`.
    init(
        delayMs: Int64, loop: UnsafeMutableRawPointer, now: @escaping () -> Int64,
        handle: @escaping (ControlMessage) -> Void
    ) {
        self.delayMs = delayMs
        self.now = now
        self.handle = handle
        timer = LoopTimer(loop: loop) { [weak self] in self?.fire() }
    }

    /// Holds `message` back; it is handled after the delay, after every message received before it.
    func hold(_ message: ControlMessage) {
        queue.append((now() + delayMs, message))
        if queue.count - head == 1 { timer?.start(after: Double(delayMs) / 1000) }
    }

    /// Drops what is held (the node is stopping).
    func stop() {
        timer?.stop()
        timer = nil
        queue = []
        head = 0
    }

    private func fire() {
        let now = now()
        while head < queue.count, queue[head].due <= now {
            let message = queue[head].message
            head += 1
            handle(message)
        }
        if head == queue.count {
            queue = []
            head = 0
        } else {
            timer?.start(after: Double(max(queue[head].due - now, 1)) / 1000)
        }
    }
}
