// Position snapshots. Positions change far too often to write each one; instead the loop remembers which users
// moved since the last flush, and every `snapshotIntervalMs` copies just those fixes into a batch and hands it to
// the store, which writes it in one transaction on its own thread while the loop keeps serving.
//
// Even the copy is too long to do in one go at scale (about 30 ms for 100k fixes here), so it is done in chunks of
// `flushChunk` fixes, one chunk per loop turn: requests and fan-out interleave with the collection and no single
// turn holds the loop for more than a chunk. A fix that changes after its user was collected is marked dirty again
// and goes out with the next flush. If a write fails, its users are marked dirty again. `kill -9` therefore loses
// at most about one interval of positions; a graceful stop flushes once more at the end.
//
// With `durablePositions`, a `pos` is answered only once it is written (`afterWrite`): it starts a snapshot at once,
// or, while one is being written, waits for the next, which starts as soon as that one ends. So every fix that
// arrives during a write shares the next one's transaction (a group commit), and a crash loses nothing answered.
//
// Late fixes go to the position history with the same batch. Nothing in the hub reads the history back: it is kept
// for operators (the user's own track, audits), bounded as it enters (`LateFixes`) and by age: every
// `positionHistoryPurgeIntervalMs` a background job deletes rows older than `positionHistoryRetentionMs`, off the
// loop, like the relic purge.
package import CairnCore
import CairnSocial
import Logging

/// A flush being collected, chunk by chunk.
struct FlushInProgress {
    var users: [Int64]
    var next = 0
    var batch = PositionBatch()
    var startedAt: Int64
    /// Durable acknowledgements this flush answers once it is written (true) or failed (false).
    var waiters: [(Bool) -> Void] = []
    var loopMicros: Int64 = 0
    var longestChunkMicros: Int64 = 0
}

extension LiveMap {
    /// Fixes copied per loop turn while collecting a snapshot.
    static let flushChunk = 4096

    /// Forces a snapshot now (tests, and the final flush at shutdown).
    public func flushPositionsNow() { flushPositions(now: clock.now()) }

    /// Changes waiting for the next snapshot (latest positions and late fixes).
    package var pendingRows: Int { dirty.count + late.count }
    /// Latest positions not yet written.
    package var unwrittenPositions: Int { dirty.count }
    /// True while a snapshot is being collected or written.
    package var isFlushing: Bool { flushing }

    /// Starts a snapshot when `snapshotIntervalMs` has passed since the last one began.
    package func flushIfDue(now: Int64) {
        if now - lastFlushAt >= configuration.snapshotIntervalMs { flushPositions(now: now) }
    }

    /// The last snapshot as operators read it, or nil before the first.
    package func lastSnapshot(now: Int64) -> SnapshotReading? {
        lastFlush.map { SnapshotReading(ageMs: now - $0.at, durationMs: $0.durationMs, rows: $0.rows) }
    }

    /// Calls `done` on the loop once every position change made so far is written (true) or its write failed
    /// (false): at once when nothing is unwritten, else after a snapshot started now, or after the next one when
    /// one is being written (it may have been collected before the change).
    public func afterWrite(_ done: @escaping (Bool) -> Void) {
        if !flushing && dirty.isEmpty && late.isEmpty {
            done(true)
            return
        }
        writeWaiters.append(done)
        if !flushing { flushPositions(now: clock.now()) }
    }

    /// Answers or starts a flush for the acknowledgements that waited for the last one to end.
    private func serveWriteWaiters() {
        guard !writeWaiters.isEmpty, !flushing else { return }
        if dirty.isEmpty && late.isEmpty {
            let waiters = writeWaiters  // their changes went out with the flush that just ended
            writeWaiters = []
            for done in waiters { done(true) }
        } else {
            flushPositions(now: clock.now())
        }
    }

    /// Starts handing every position changed since the last flush to the store (no-op while one is running).
    func flushPositions(now: Int64) {
        guard !flushing, !dirty.isEmpty || !late.isEmpty else { return }
        flushing = true
        lastFlushAt = now
        work.hold()  // the collection counts as work in flight, so a shutdown waits for it
        var flush = FlushInProgress(users: Array(dirty), startedAt: now)
        flush.waiters = writeWaiters
        writeWaiters = []
        book.dirty.removeAll()
        flush.batch.history = late.takeAll()
        flush.batch.latest.reserveCapacity(flush.users.count)
        collecting = flush
        collectChunk()
    }

    private func collectChunk() {
        let started = ContinuousClock.now
        let end = min(collecting!.users.count, collecting!.next + Self.flushChunk)
        for i in collecting!.next..<end {
            let user = collecting!.users[i]
            if let fix = book.fixes[user] { collecting!.batch.latest.append(StoredFix(userID: user, fix: fix)) }
        }
        collecting!.next = end
        let spent = started.duration(to: .now)
        let micros = Int64(spent.components.seconds * 1_000_000 + spent.components.attoseconds / 1_000_000_000_000)
        collecting!.loopMicros += micros
        collecting!.longestChunkMicros = max(collecting!.longestChunkMicros, micros)
        if end < collecting!.users.count {
            work.later { self.collectChunk() }
            return
        }
        let flush = collecting!
        collecting = nil
        write(flush)
        work.release()
    }

    private func write(_ flush: FlushInProgress) {
        let store = self.store
        let batch = flush.batch
        let rows = batch.latest.count + batch.history.count
        work.background(
            { () async throws -> Bool in
                try await store.flushPositions(batch)
                return true
            },
            then: { result in
                self.flushing = false
                switch result {
                case .success:
                    let total = self.clock.now() - flush.startedAt
                    self.lastFlush = (at: flush.startedAt, rows: rows, durationMs: total)
                    self.lastFlushLoopMicros = flush.loopMicros
                    self.lastFlushLongestChunkMicros = flush.longestChunkMicros
                    hubLogger.debug("snapshot: \(rows) row(s), \(flush.loopMicros) µs on the loop, \(total) ms in all")
                case .failure(let error):
                    hubLogger.error("snapshot of \(rows) row(s) failed, will retry: \(error)")
                    for item in batch.latest where self.book.fixes[item.userID] != nil {
                        self.book.dirty.insert(item.userID)
                    }
                    // Back into the rings, within their bounds (fixes that arrived meanwhile may push some out).
                    for item in batch.history { self.late.keep(item.fix, for: item.userID) }
                }
                let written = if case .success = result { true } else { false }
                for done in flush.waiters { done(written) }
                self.serveWriteWaiters()
            })
    }
}

extension LiveMap {
    /// Deletes history older than the retention, off the loop, at most once per purge interval.
    package func purgeHistory(now: Int64) {
        guard !purgingHistory, now - lastHistoryPurgeAt >= configuration.positionHistoryPurgeIntervalMs else { return }
        purgingHistory = true
        lastHistoryPurgeAt = now
        let store = self.store
        let cutoff = now - configuration.positionHistoryRetentionMs
        work.background(
            { try await store.purgePositionHistory(before: cutoff) },
            then: { result in
                self.purgingHistory = false
                switch result {
                case .success(let count) where count > 0:
                    hubLogger.info("purged \(count) position history row(s) older than the retention period")
                case .success: break
                case .failure(let error): hubLogger.error("purging position history failed: \(error)")
                }
            })
    }
}
