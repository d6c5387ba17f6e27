// The transport's per-delivery bookkeeping measured alone, with no socket: the connection look-up, the latest-wins
// slot, the flush list, and at the end of each turn the gathering of the slots into the connection's frame buffer
// (everything `sendLatest` and `flush` do except `lws_write`). The structures in use (`ConnectionTable`,
// `LatestSlots`) run against the ones they replaced (a dictionary of connections, a dictionary of slots per
// connection) on the same workload in the same process, rounds alternating, so the ratio is the result
// (`cairn-bench bookkeeping`; docs/BENCHMARKS.md). It drives the transport's own types through the few members
// CairnServer makes `package` for it (`ConnectionTable`, `ConnectionState`, `LatestSlots.set`).
import CairnLoop
import CairnServer

/// Side-by-side timing of the delivery bookkeeping, current structures against dictionaries. Loop-free, sockets-free.
enum BookkeepingBenchmark {
    /// One round's figures: nanoseconds per delivery for each structure.
    struct Round: Sendable {
        let flat: Double
        let dictionary: Double
    }

    /// `connections` connections; each position goes to `watchers` of them (a fixed random set per owner);
    /// `perTurn` positions per loop turn before the flush; `positions` per round.
    static func run(
        connections: Int, watchers: Int, perTurn: Int, positions: Int, rounds: Int, seed: UInt64 = 1
    ) -> [Round] {
        var random = seed | 1
        func next() -> Int {
            random ^= random << 13
            random ^= random >> 7
            random ^= random << 17
            return Int(truncatingIfNeeded: random >> 1)
        }
        // Who watches each owner: `watchers` distinct connection indices other than the owner's.
        let audience: [[Int]] = (0..<connections).map { owner in
            var picked: Set<Int> = []
            while picked.count < min(watchers, connections - 1) {
                let c = next() % connections
                if c != owner { picked.insert(c) }
            }
            return picked.sorted()
        }
        let template = Array(#"{"ev":"pos","user":123456,"lat":48.8566140,"lon":2.3522219,"ts":1763870000000}"#.utf8)
        var results: [Round] = []
        var sink = 0
        for _ in 0..<rounds {
            var current = Flat(connections: connections)
            let flat = measure(positions: positions) {
                sink &+= current.run(audience, template, perTurn: perTurn, positions: positions)
            }
            var before = Dictionaries(connections: connections)
            let dictionary = measure(positions: positions) {
                sink &+= before.run(audience, template, perTurn: perTurn, positions: positions)
            }
            let deliveries = Double(positions * audience[0].count)
            results.append(Round(flat: flat / deliveries, dictionary: dictionary / deliveries))
        }
        precondition(sink != 0, "nothing was gathered")
        return results
    }

    private static func measure(positions: Int, _ body: () -> Void) -> Double {
        let start = ContinuousClock.now
        body()
        let (seconds, attoseconds) = (ContinuousClock.now - start).components
        return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
    }

    /// A new array per position, as `LocalDelivery` encodes each move once.
    @inline(__always)
    fileprivate static func encode(_ template: [UInt8], _ n: Int) -> [UInt8] {
        var bytes = template
        bytes[10] = UInt8(truncatingIfNeeded: 48 + n % 10)
        return bytes
    }
}

/// What the transport does now.
private struct Flat {
    var table = ConnectionTable()
    var ids: [ConnectionID] = []
    var queued: [ConnectionState] = []
    var receipts: [UInt64] = []
    /// Never dereferenced: nothing here reaches lws.
    private static var wsi: OpaquePointer { OpaquePointer(bitPattern: 0x1000)! }

    init(connections: Int) {
        for _ in 0..<connections { ids.append(table.insert { ConnectionState(id: $0, wsi: Self.wsi) }.id) }
    }

    mutating func run(_ audience: [[Int]], _ template: [UInt8], perTurn: Int, positions: Int) -> Int {
        var written = 0
        for p in 0..<positions {
            let owner = (p &* 7919) % audience.count
            let bytes = BookkeepingBenchmark.encode(template, p)
            for c in audience[owner] {
                guard let state = table[ids[c]], !state.closing else { continue }
                state.latest.set(Int64(owner), bytes, receivedAt: UInt64(p))
                if !state.isQueued {
                    state.isQueued = true
                    queued.append(state)
                }
            }
            if (p + 1) % perTurn == 0 { written += flush() }
        }
        return written + flush()
    }

    mutating func flush() -> Int {
        var written = 0
        for state in queued {
            state.isQueued = false
            state.collectLatest(receivedAt: &receipts)
            written += state.outbound.count - ConnectionState.pre
            state.resetOutbound()
            receipts.removeAll(keepingCapacity: true)
        }
        queued.removeAll(keepingCapacity: true)
        return written
    }
}

/// What the transport did before: connections in a dictionary by id, each with a dictionary of slots.
private struct Dictionaries {
    final class Connection {
        var outbound = [UInt8](repeating: 0, count: ConnectionState.pre)
        var latest: [Int64: (bytes: [UInt8], receivedAt: UInt64)] = [:]
        var closing = false
        var isQueued = false

        func collectLatest(receivedAt: inout [UInt64]) {
            guard !latest.isEmpty else { return }
            for slot in latest.values {
                if outbound.count > ConnectionState.pre { outbound.append(0x0A) }
                outbound.append(contentsOf: slot.bytes)
                receivedAt.append(slot.receivedAt)
            }
            latest.removeAll(keepingCapacity: latest.count <= 64)
        }
    }

    var table: [ConnectionID: Connection] = [:]
    var queued: [Connection] = []
    var receipts: [UInt64] = []

    init(connections: Int) {
        for c in 0..<connections { table[ConnectionID(c + 1)] = Connection() }
    }

    mutating func run(_ audience: [[Int]], _ template: [UInt8], perTurn: Int, positions: Int) -> Int {
        var written = 0
        for p in 0..<positions {
            let owner = (p &* 7919) % audience.count
            let bytes = BookkeepingBenchmark.encode(template, p)
            for c in audience[owner] {
                guard let state = table[ConnectionID(c + 1)], !state.closing else { continue }
                state.latest[Int64(owner)] = (bytes, UInt64(p))
                if !state.isQueued {
                    state.isQueued = true
                    queued.append(state)
                }
            }
            if (p + 1) % perTurn == 0 { written += flush() }
        }
        return written + flush()
    }

    mutating func flush() -> Int {
        var written = 0
        for state in queued {
            state.isQueued = false
            state.collectLatest(receivedAt: &receipts)
            written += state.outbound.count - ConnectionState.pre
            if state.outbound.capacity > ConnectionState.retainedCapacity {
                state.outbound = [UInt8](repeating: 0, count: ConnectionState.pre)
            } else {
                state.outbound.removeLast(state.outbound.count - ConnectionState.pre)
            }
            receipts.removeAll(keepingCapacity: true)
        }
        queued.removeAll(keepingCapacity: true)
        return written
    }
}
