// The one door into the service thread. Any thread may push a job; pushing wakes lws with lws_cancel_service()
// (the only lws call that is safe from another thread in this build), and the service thread drains the whole
// queue in LWS_CALLBACK_EVENT_WAIT_CANCELLED. Wake-ups coalesce, so draining everything each time matters.
import CLws
import CairnDomain
import Synchronization

/// A locked job queue that wakes the libwebsockets service loop; the transport's `LoopScheduler`.
final class LoopJobQueue: LoopScheduler {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        /// The lws context as an address: kept as an integer so the state stays Sendable.
        var context: UInt = 0
    }

    private let state = Mutex(State())

    /// Queues a job and wakes the loop (if it is running).
    func execute(_ job: @escaping @Sendable () -> Void) {
        state.withLock { s in
            s.jobs.append(job)
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

    /// Runs every queued job; called on the service thread only.
    func drain() {
        while true {
            let jobs = state.withLock { s -> [@Sendable () -> Void] in
                let taken = s.jobs
                s.jobs.removeAll(keepingCapacity: true)
                return taken
            }
            if jobs.isEmpty { return }
            for job in jobs { job() }
        }
    }
}
