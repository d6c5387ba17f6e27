// How long a position snapshot holds the event loop. A serial dispatch queue plays the loop: it owns the hub, a
// 1 ms heartbeat timer runs on it, and the longest gap between heartbeats while a flush of N changed positions is
// under way is the stall a real loop would see. The SQLite write itself runs on the store's writer thread; only
// the copy of the changed fixes happens on the loop.
import CairnCore
import CairnCrypto
import CairnHub
import CairnLiveMap
import CairnLoop
import CairnSessions
import CairnStore
import Dispatch
import Foundation

struct SnapshotBenchmarkError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

private struct QueueScheduler: LoopScheduler {
    let queue: DispatchQueue
    func execute(_ job: @escaping @Sendable () -> Void) { queue.async(execute: job) }
}

private final class Gaps: @unchecked Sendable {
    var last: UInt64 = 0
    var worst: UInt64 = 0
    var recording = false
}

func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let semaphore = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var result: Result<T, any Error>!
    Task {
        do { result = .success(try await body()) } catch { result = .failure(error) }
        semaphore.signal()
    }
    semaphore.wait()
    return try result.get()
}

func runSnapshotBenchmark(arguments: [String]) throws {
    var count = 100_000
    var rounds = 3
    var i = 0
    while i < arguments.count {
        switch arguments[i] {
        case "--positions":
            count = Int(arguments[i + 1]) ?? count
            i += 1
        case "--rounds":
            rounds = Int(arguments[i + 1]) ?? rounds
            i += 1
        default: throw SnapshotBenchmarkError(message: "unknown option \(arguments[i]); use --positions N --rounds R")
        }
        i += 1
    }
    let dir = NSTemporaryDirectory() + "cairn-bench-snapshot-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try SQLiteStore(directory: dir)
    let total = count
    let users = try blocking {
        try await store.createUsers(
            (0..<total).map {
                NewUser(username: "user\($0)", name: "User \($0)", passwordHash: nil, isGuest: false, createdAt: 0)
            })
    }
    let loop = DispatchQueue(label: "bench.loop")
    let random = SecureRandom()
    let clock = SystemClock()
    let accounts = Accounts(
        store: store,
        hasher: PasswordHasher(
            parameters: ScryptParameters(n: 1024, r: 8, p: 1),
            workers: 1, random: random),
        random: random, clock: clock)
    var config = HubConfiguration()
    config.snapshotIntervalMs = .max / 2  // flushes happen only when the benchmark asks
    let stores = HubStores(
        social: store, relics: store, chat: store, profiles: store, buckets: store, trackers: store, safeZones: store)
    let hub = Hub(
        accounts: accounts, stores: stores, scheduler: QueueScheduler(queue: loop), clock: clock,
        configuration: config)

    let gaps = Gaps()
    let timer = DispatchSource.makeTimerSource(queue: loop)
    timer.schedule(deadline: .now(), repeating: .milliseconds(1), leeway: .microseconds(100))
    timer.setEventHandler {
        let t = DispatchTime.now().uptimeNanoseconds
        if gaps.recording && gaps.last != 0 { gaps.worst = max(gaps.worst, t - gaps.last) }
        gaps.last = t
    }
    timer.resume()

    print("snapshot benchmark: \(count) changed positions per flush, \(rounds) rounds (release build)")
    print("round  rows     on-loop copy (sum)  longest chunk  longest loop gap  flush total")
    for round in 1...rounds {
        // Every user moves: all `count` positions are dirty.
        loop.sync {
            let now = clock.now()
            for (n, user) in users.enumerated() {
                let lat = 48.80 + Double(n % 1000) * 0.0002 + Double(round) * 1e-6
                let lon = 2.25 + Double(n / 1000) * 0.0002
                hub.liveMap.acceptFix(Fix(lat: lat, lon: lon, acc: 5, ts: now), for: user.id, now: now)
            }
        }
        let previous = loop.sync { hub.lastFlush?.at }
        loop.sync {
            gaps.worst = 0
            gaps.last = DispatchTime.now().uptimeNanoseconds
            gaps.recording = true
        }
        let started = DispatchTime.now().uptimeNanoseconds
        loop.async { hub.flushPositionsNow() }
        while loop.sync(execute: { hub.lastFlush?.at == previous || hub.lastFlush == nil }) {
            usleep(200)
        }
        let total = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
        let (copy, chunk, rows, worst) = loop.sync {
            gaps.recording = false
            return (
                Double(hub.liveMap.lastFlushLoopMicros) / 1000, Double(hub.liveMap.lastFlushLongestChunkMicros) / 1000,
                hub.lastFlush?.rows ?? 0, Double(gaps.worst) / 1e6
            )
        }
        print(
            String(
                format: "%5d  %7d  %13.2f ms  %10.2f ms  %12.2f ms  %8.1f ms", round, rows, copy, chunk, worst, total))
    }
    timer.cancel()
    try store.close()
}
