// The source addresses each user has logged in from successfully, recently. Failed logins from new sources are
// throttled per username as a whole (so a botnet cannot guess faster by spreading out), but that limit must not
// lock the owner out: a source that has logged in as the user before is exempt from it and held only by its own
// per-source limit. Memory is bounded: a few sources per user, and the least recently added users are forgotten
// first, in O(1) amortised.
import Synchronization

/// Remembers where each user logged in from. Thread-safe (logins run off the loop).
final class KnownSources: Sendable {
    private struct State {
        var sources: [String: [String]] = [:]
        var order: [String] = []
        var head = 0
    }

    private let state = Mutex(State())
    private let perUser: Int
    private let users: Int

    /// Keeps up to `perUser` sources for each of up to `users` users.
    init(perUser: Int = 8, users: Int = 100_000) {
        self.perUser = perUser
        self.users = users
    }

    /// True when `source` has logged in as `username` (a nil source is never known).
    func contains(_ source: String?, for username: String) -> Bool {
        guard let source else { return false }
        return state.withLock { $0.sources[username]?.contains(source) ?? false }
    }

    /// Records a successful login of `username` from `source`.
    func remember(_ source: String?, for username: String) {
        guard let source else { return }
        state.withLock { s in
            if var list = s.sources[username] {
                if let i = list.firstIndex(of: source) { list.remove(at: i) }
                list.append(source)
                if list.count > perUser { list.removeFirst(list.count - perUser) }
                s.sources[username] = list
                return
            }
            s.sources[username] = [source]
            s.order.append(username)
            while s.sources.count > users, s.head < s.order.count {
                s.sources[s.order[s.head]] = nil
                s.head += 1
            }
            if s.head > 1024 && s.head * 2 > s.order.count {  // compact the consumed prefix now and then
                s.order.removeFirst(s.head)
                s.head = 0
            }
        }
    }
}
