// Position snapshots. Positions change far too often to write each one; instead the loop remembers which users
// moved since the last flush, and every `snapshotIntervalMs` copies just those fixes into a batch and hands it to
// the store, which writes it in one transaction on its own thread while the loop keeps serving. Only the copy runs
// on the loop (its duration is recorded as `lastFlush`). If a flush fails, its users are marked dirty again.
// `kill -9` therefore loses at most one interval of positions; a graceful stop flushes once more at the end.
import CairnWire

extension Hub {
    /// Hands every position changed since the last flush to the store (no-op while a flush is running).
    func flushPositions(now: Int64) {
        guard !flushing, !dirty.isEmpty || !lateFixes.isEmpty else { return }
        let started = ContinuousClock.now
        var batch = PositionBatch()
        batch.latest.reserveCapacity(dirty.count)
        for user in dirty {
            if let fix = fixes[user] { batch.latest.append(StoredFix(userID: user, fix: fix)) }
        }
        batch.history = lateFixes
        dirty.removeAll(keepingCapacity: true)
        lateFixes.removeAll()
        let copyTime = started.duration(to: .now)
        flushing = true
        lastFlushAt = now
        let social = self.social, rows = batch.latest.count + batch.history.count, sealed = batch
        let loopMicros = Int64(copyTime.components.seconds * 1_000_000 + copyTime.components.attoseconds / 1_000_000_000_000)
        background({ () async throws -> Bool in
            try await social.flushPositions(sealed)
            return true
        }, then: { result in
            self.flushing = false
            switch result {
            case .success:
                let total = self.clock.now() - now
                self.lastFlush = (at: now, rows: rows, durationMs: total)
                self.lastFlushLoopMicros = loopMicros
                self.logger.debug("snapshot: \(rows) row(s), \(loopMicros) µs on the loop, \(total) ms in all")
            case .failure(let error):
                self.logger.error("snapshot of \(rows) row(s) failed, will retry: \(error)")
                for item in sealed.latest where self.fixes[item.userID] != nil { self.dirty.insert(item.userID) }
                self.lateFixes.insert(contentsOf: sealed.history, at: 0)
            }
        })
    }
}
