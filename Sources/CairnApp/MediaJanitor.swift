// Periodic garbage collection of media: every `garbagePeriodMs` it deletes uploads no relic names once they are
// older than `garbageGraceMs`, and the files no row names any more. It runs in a task, never on the service
// thread, and `stop()` cancels it and waits for a collection in progress, so the store can close right after.
import CairnDomain
import CairnStore
import Dispatch
import Logging
import Synchronization

/// Runs media garbage collection periodically until stopped.
final class MediaJanitor: Sendable {
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts collecting every `configuration.garbagePeriodMs`.
    init(store: SQLiteStore, clock: any Clock, configuration: MediaConfiguration, logger: Logger) {
        let finished = self.finished
        let period = UInt64(max(1, configuration.garbagePeriodMs)) * 1_000_000
        let grace = configuration.garbageGraceMs
        task.withLock {
            $0 = Task.detached(priority: .utility) {
                defer { finished.signal() }
                while !Task.isCancelled {
                    do { try await Task.sleep(nanoseconds: period) } catch { return }
                    do {
                        let removed = try await store.collectGarbageMedia(uploadedBefore: clock.now() - grace)
                        if removed > 0 { logger.info("collected \(removed) unreferenced media upload(s)") }
                    } catch {
                        logger.error("media garbage collection failed: \(error)")
                    }
                }
            }
        }
    }

    /// Stops collecting and waits for a collection in progress to finish; idempotent.
    func stop() {
        guard let running = task.withLock({ t -> Task<Void, Never>? in defer { t = nil }; return t }) else { return }
        running.cancel()
        finished.wait()
    }
}
