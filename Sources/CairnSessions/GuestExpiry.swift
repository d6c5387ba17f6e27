// Guest accounts cost nothing to make, so without an end they pile up forever with their positions, relics and
// tokens. A guest not connected for `guestExpiryMs` is deleted with everything that is theirs (accounts.guest_expiry,
// docs/PROTOCOL.md). Last activity is kept cheap: a guest's session beginning or ending marks them, connected guests
// are marked again every `guestSeenIntervalMs`, and the marks reach the store in one batch per tick, off the loop;
// a position never writes it. The purge runs every `guestPurgeIntervalMs`, off the loop like the relic purge, and
// spares every guest connected or marked but not yet written, so a connected guest is never purged.
package import CairnCore
import Logging

/// Records guests' last activity and purges the inactive ones.
package final class GuestExpiry {
    private let store: any AccountStore
    private let work: LoopWork
    private let sessions: Sessions
    private let configuration: HubConfiguration

    /// Guests seen since the last write.
    private var seen: Set<Int64> = []
    /// Guests whose mark is being written.
    private var writing: Set<Int64> = []
    private var lastSeenRoundAt: Int64
    private var purging = false
    /// The first purge runs an interval after start: a guest's expiry is days, and a start stays light.
    private var lastPurgeAt: Int64

    /// Accounts the purge deleted, with their relics: memory must forget them (the hub wires this).
    package var purged: ((GuestPurge) -> Void)?

    package init(
        store: any AccountStore, work: LoopWork, sessions: Sessions, configuration: HubConfiguration, now: Int64
    ) {
        self.store = store
        self.work = work
        self.sessions = sessions
        self.configuration = configuration
        self.lastSeenRoundAt = now
        self.lastPurgeAt = now
    }

    /// A guest's session began or ended.
    package func seen(_ user: Int64) { seen.insert(user) }

    /// Once a tick: marks connected guests again once per interval, writes the marks, and purges when due.
    package func tick(now: Int64) {
        if now - lastSeenRoundAt >= configuration.guestSeenIntervalMs {
            lastSeenRoundAt = now
            seen.formUnion(sessions.onlineGuests())
        }
        writeSeen(now: now)
        purge(now: now)
    }

    private func writeSeen(now: Int64) {
        guard !seen.isEmpty, writing.isEmpty else { return }
        writing = seen
        seen = []
        let store = self.store
        let users = Array(writing)
        work.background(
            { try await store.markSeen(userIDs: users, at: now) },
            then: { result in
                if case .failure(let error) = result {
                    hubLogger.error("recording guests' last activity failed: \(error)")
                    self.seen.formUnion(self.writing)  // tried again next tick
                }
                self.writing = []
            })
    }

    private func purge(now: Int64) {
        let expiry = configuration.guestExpiryMs
        guard expiry > 0, !purging, now - lastPurgeAt >= configuration.guestPurgeIntervalMs else { return }
        purging = true
        lastPurgeAt = now
        let sparing = seen.union(writing).union(sessions.onlineGuests())
        let store = self.store
        let cutoff = now - expiry
        work.background(
            { try await store.purgeGuests(seenBefore: cutoff, sparing: sparing) },
            then: { result in
                self.purging = false
                switch result {
                case .success(let purge) where !purge.users.isEmpty:
                    hubLogger.info("purged \(purge.users.count) guest account(s) inactive for the expiry period")
                    self.purged?(purge)
                case .success: break
                case .failure(let error): hubLogger.error("purging inactive guests failed: \(error)")
                }
            })
    }
}
