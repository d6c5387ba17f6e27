// The hot path end to end inside the hub: one `pos` frame from a user with K watching friends — parse, validate,
// update memory and the spatial index, encode the event once, hand it to each friend's latest-wins slot. The
// transport is replaced by an outbound that only counts, so what is measured is the hub's own cost per position and
// per delivery. The hub runs on this thread, which plays the event loop. `--relics N` scatters N relics (radius 10 to
// 500 m) over a 4 km box around the mover's path, so the roaming check (and the appear/vanish events it causes) is
// part of the cost.
import CairnApp
import CairnCore
import CairnCrypto
import CairnHub
import CairnLoop
import CairnProtocol
import CairnSQL
import CairnSeed
import CairnSessions
import CairnStore
import CairnWire
import Dispatch
import Foundation
import Synchronization

private final class CountingOutbound: Outbound {
    var deliveries = 0
    var bytes = 0
    var events = 0
    func send(_ connection: ConnectionID, _ json: UnsafeRawBufferPointer) {
        events += 1
        bytes += json.count
    }
    func sendLatest(_ connection: ConnectionID, key: Int64, _ json: [UInt8]) {
        deliveries += 1
        bytes += json.count
    }
    func dropLatest(_ connection: ConnectionID, key: Int64) {}
    func close(_ connection: ConnectionID, code: UInt16, reason: String) {}
}

private final class HeldJobs: LoopScheduler {
    let jobs = Mutex<[@Sendable () -> Void]>([])
    func execute(_ job: @escaping @Sendable () -> Void) { jobs.withLock { $0.append(job) } }
    func runUntil(_ done: () -> Bool) {
        while !done() {
            let taken = jobs.withLock { j in
                defer { j.removeAll() }
                return j
            }
            for job in taken { job() }
            if taken.isEmpty { usleep(100) }
        }
    }
}

func runFanoutBenchmark(arguments: [String]) throws {
    var friends = 20
    var positions = 200_000
    var rounds = 5
    var relicCount = 0
    var i = 0
    while i < arguments.count {
        switch arguments[i] {
        case "--friends":
            friends = Int(arguments[i + 1]) ?? friends
            i += 1
        case "--positions":
            positions = Int(arguments[i + 1]) ?? positions
            i += 1
        case "--rounds":
            rounds = Int(arguments[i + 1]) ?? rounds
            i += 1
        case "--relics":
            relicCount = Int(arguments[i + 1]) ?? relicCount
            i += 1
        default:
            throw SnapshotBenchmarkError(
                message: "unknown option \(arguments[i]); use --friends K --positions N --rounds R --relics N")
        }
        i += 1
    }
    let dir = NSTemporaryDirectory() + "cairn-bench-fanout-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try SQLiteStore(directory: dir)
    // One mover and `friends` watchers, all friends of the mover (a star: every position goes to K watchers).
    let plan = FixturePlan(users: friends + 1, friends: 0, shape: .random, seed: 1, prefix: "fan")
    let file = try blocking {
        try await Fixtures.generate(plan, into: store, random: SecureRandom(), clock: SystemClock())
    }
    let ids = file.users.map(\.id)
    try blocking {
        for watcher in ids.dropFirst() {
            try await store.addFriendRequest(from: watcher, to: ids[0], at: 0)  // a friendship accepts a request
            try await store.addFriendship(ids[0], watcher, at: 0)
        }
    }
    let jobs = HeldJobs()
    let clock = SystemClock()
    let random = SecureRandom()
    let accounts = Accounts(
        store: store,
        hasher: PasswordHasher(
            parameters: ScryptParameters(n: 1024, r: 8, p: 1),
            workers: 1, random: random),
        random: random, clock: clock)
    var config = HubConfiguration()
    config.snapshotIntervalMs = .max / 2
    config.messagesPerSecond = 0  // one connection replays every position at once: no per-connection limit here
    let stores = HubStores(
        social: store, relics: store, chat: store, profiles: store, buckets: store, trackers: store, safeZones: store)
    let hub = Hub(accounts: accounts, stores: stores, scheduler: jobs, clock: clock, configuration: config)
    hub.restore(try store.loadSocial())
    var seed = SplitMix64(seed: 42)
    func unit() -> Double { Double(seed.next() >> 11) / Double(1 << 53) }
    hub.restore(
        relics: (0..<relicCount).map { n in
            RelicMarker(
                id: Int64(n + 1), creatorID: ids[0], lat: 48.837 + unit() * 0.036, lon: 2.323 + unit() * 0.054,
                radius: 10 + unit() * 490, createdAt: 0, expiresAt: nil, locked: false)
        })
    let outbound = CountingOutbound()
    let router = Router(hub: hub)
    router.outbound = outbound
    for (n, user) in file.users.enumerated() { router.connectionOpened(ConnectionID(n + 1), token: user.token) }
    jobs.runUntil { hub.authenticatedCount == file.users.count }
    for n in 1...friends {
        Array(#"{"op":"friends.watch"}"#.utf8).withUnsafeBytes { router.received(ConnectionID(n + 1), frame: $0) }
    }

    print(
        "fan-out benchmark: 1 mover, \(friends) watching friends, \(positions) positions per round, "
            + "\(rounds) rounds, \(relicCount) relics"
    )
    print("round  ns/position  ns/delivery  deliveries  MB encoded  relic events")
    // 1 ms apart, starting far enough back that the last one is not in the future (which the hub would refuse).
    var ts = clock.now() - Int64(positions * rounds) - 1000
    for round in 1...rounds {
        // Frames are built before the clock starts: the client's bytes are not part of the server's cost. Each
        // carries a newer ts than the last, so none is stale history.
        var frames: [[UInt8]] = []
        frames.reserveCapacity(positions)
        for k in 0..<positions {
            ts += 1
            let lat = 48.85 + Double(k % 1000) * 1e-5
            let frame = #"{"op":"pos","lat":\#(lat),"lon":2.35,"acc":5,"spd":1.4,"hdg":90,"bat":80,"ts":\#(ts)}"#
            frames.append(Array(frame.utf8))
        }
        outbound.deliveries = 0
        outbound.bytes = 0
        outbound.events = 0
        let started = DispatchTime.now().uptimeNanoseconds
        for frame in frames { frame.withUnsafeBytes { router.received(1, frame: $0) } }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started)
        guard outbound.deliveries == positions * friends else {
            throw SnapshotBenchmarkError(
                message: "expected \(positions * friends) deliveries, got \(outbound.deliveries)")
        }
        print(
            String(
                format: "%5d  %11.0f  %11.1f  %10d  %10.1f  %12d", round, elapsed / Double(positions),
                elapsed / Double(max(outbound.deliveries, 1)), outbound.deliveries, Double(outbound.bytes) / 1e6,
                outbound.events))
    }
    try store.close()
}
