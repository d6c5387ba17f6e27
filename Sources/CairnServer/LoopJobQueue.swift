// The one door into the service thread. Any thread may push a job; pushing wakes lws with lws_cancel_service()
// (the only lws call that is safe from another thread in this build), and the service thread drains the whole
// queue in LWS_CALLBACK_EVENT_WAIT_CANCELLED. Wake-ups coalesce, so draining everything each time matters.
// Each job is stamped when queued, so the drain can report how long it waited for the loop (event-loop lag).
import CLws
import CairnLoop
import Synchronization

/// A locked job queue that wakes the libwebsockets service loop; the transport's `LoopScheduler`.
final class LoopJobQueue: LoopScheduler {
    private struct State {
        var jobs: [(queuedAt: UInt64, job: @Sendable () -> Void)] = []
        /// The lws context as an address: kept as an integer so the state stays Sendable.
        var context: UInt = 0
    }

    private let state = Mutex(State())
    private let confinement: LoopConfinement

    init(confinement: LoopConfinement) { self.confinement = confinement }

    /// Queues a job and wakes the loop (if it is running).
    func execute(_ job: @escaping @Sendable () -> Void) {
        state.withLock { s in
            s.jobs.append((MonotonicTime.now(), job))
            if s.context != 0 { lws_cancel_service(OpaquePointer(bitPattern: s.context)) }
        }
    }

    /// Wakes the loop without a job (e.g. after a flag was set).
    func wake() {
        state.withLock { s in
            if s.context != 0 { lws_cancel_service(OpaquePointer(bitPattern: s.context)) }
        }
    }

    /// Attaches the live context, or detaches it (nil) just before it is destroyed.
    func attach(_ context: OpaquePointer?) {
        let address = context.map { UInt(bitPattern: $0) } ?? 0
        state.withLock { $0.context = address }
    }

    /// Runs the jobs queued so far; called on the service thread only. Jobs those jobs queue wait for the next
    /// loop turn (a fresh wake-up is requested), so work that reschedules itself in slices — a snapshot being
    /// collected — lets sockets be served between slices instead of running to the end in one callback.
    /// `waited` receives, per job, the nanoseconds it spent queued.
    func drain(waited: (Int64) -> Void = { _ in }) {
        confinement.assertOnLoop()
        let jobs = take()
        if !jobs.isEmpty {
            let now = MonotonicTime.now()
            for entry in jobs { waited(MonotonicTime.elapsed(from: entry.queuedAt, to: now)) }
        }
        for entry in jobs { entry.job() }
        state.withLock { s in
            if !s.jobs.isEmpty && s.context != 0 { lws_cancel_service(OpaquePointer(bitPattern: s.context)) }
        }
    }

    /// Runs every job until the queue stays empty; for the end of the service thread, when no loop turn follows.
    func drainAll() {
        confinement.assertOnLoop()
        while true {
            let jobs = take()
            if jobs.isEmpty { return }
            for entry in jobs { entry.job() }
        }
    }

    private func take() -> [(queuedAt: UInt64, job: @Sendable () -> Void)] {
        state.withLock { s in
            let taken = s.jobs
            s.jobs.removeAll(keepingCapacity: true)
            return taken
        }
    }
}
