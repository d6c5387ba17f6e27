// Fan-out of the client's events and states to any number of AsyncStreams: each call to `events` or `states` is a
// subscriber of its own, removed when its stream ends. A lock (not the client's actor) guards the list, so that the
// streams are reached without `await`.
import Foundation

/// Hands every value to every live subscriber's stream.
final class Broadcaster<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var subscribers: [UInt64: AsyncStream<Element>.Continuation] = [:]
    private var nextID: UInt64 = 0
    private var finished = false
    private var latest: Element?
    private let replaysLatest: Bool
    private let buffer: Int

    /// - Parameters:
    ///   - initial: a value a new subscriber gets first (and then the latest one), for states; `nil` for events.
    ///   - buffer: how many values a subscriber that does not keep up may have waiting (the oldest are dropped).
    init(initial: Element? = nil, buffer: Int) {
        self.latest = initial
        self.replaysLatest = initial != nil
        self.buffer = buffer
    }

    /// A new subscriber's stream; it ends when the broadcaster finishes.
    func stream() -> AsyncStream<Element> {
        AsyncStream(bufferingPolicy: .bufferingNewest(buffer)) { continuation in
            let id: UInt64? = lock.locked {
                if replaysLatest, let latest { continuation.yield(latest) }
                if finished { return nil }
                nextID += 1
                subscribers[nextID] = continuation
                return nextID
            }
            guard let id else {
                continuation.finish()
                return
            }
            continuation.onTermination = { [weak self] _ in
                guard let self else { return }
                self.lock.locked { _ = self.subscribers.removeValue(forKey: id) }
            }
        }
    }

    /// Passes `value` to every subscriber.
    func yield(_ value: Element) {
        let targets = lock.locked {
            if replaysLatest { latest = value }
            return finished ? [] : Array(subscribers.values)
        }
        for continuation in targets { continuation.yield(value) }
    }

    /// Ends every subscriber's stream, and those of later subscribers at once.
    func finish() {
        let targets = lock.locked {
            finished = true
            defer { subscribers.removeAll() }
            return Array(subscribers.values)
        }
        for continuation in targets { continuation.finish() }
    }
}

extension NSLock {
    /// Runs `body` holding the lock (Foundation's own `withLock` is newer than the platforms this package supports).
    func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
