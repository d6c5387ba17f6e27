// Periodic media collection: every period it asks the `MediaLibrary` to collect uploads no relic names once they
// are older than the grace period. It runs in a task, never on the event loop, and `stop()` cancels it and waits
// for a collection in progress, so the store can close right after.
import Dispatch
public import Logging
import Synchronization

/// Runs media garbage collection periodically until stopped.
public final class MediaCollector: Sendable {
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts collecting from `library` every `periodMs` milliseconds (the first time one period from now).
    public init(library: MediaLibrary, periodMs: Int64, logger: Logger = Logger(label: "cairn.media")) {
        let finished = self.finished
        let period = UInt64(max(1, periodMs)) * 1_000_000
        task.withLock {
            $0 = Task.detached(priority: .utility) {
                defer { finished.signal() }
                while !Task.isCancelled {
                    do { try await Task.sleep(nanoseconds: period) } catch { return }
                    // A failure is logged by the library; the next period tries again.
                    guard let removed = try? await library.collectGarbage() else { continue }
                    if removed > 0 { logger.info("collected \(removed) unreferenced media upload(s)") }
                }
            }
        }
    }

    /// Stops collecting and waits for a collection in progress to finish; idempotent.
    public func stop() {
        guard
            let running = task.withLock({ t -> Task<Void, Never>? in
                defer { t = nil }
                return t
            })
        else { return }
        running.cancel()
        finished.wait()
    }
}
