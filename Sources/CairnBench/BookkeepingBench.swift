// `cairn-bench bookkeeping`: the transport's per-delivery bookkeeping without sockets (connection look-up,
// latest-wins slot, flush list, gathering into the frame buffer), the dense connection table and flat slots
// against the dictionaries they replaced, in the same run. The measurement is `BookkeepingBenchmark`.

func runBookkeepingBenchmark(arguments: [String]) throws {
    var connections = 2000
    var watchers = 10
    var perTurn = 1
    var positions = 200_000
    var rounds = 5
    var i = 0
    while i < arguments.count {
        let value = i + 1 < arguments.count ? Int(arguments[i + 1]) : nil
        switch arguments[i] {
        case "--connections": connections = value ?? connections
        case "--watchers": watchers = value ?? watchers
        case "--per-turn": perTurn = value ?? perTurn
        case "--positions": positions = value ?? positions
        case "--rounds": rounds = value ?? rounds
        default:
            throw SnapshotBenchmarkError(
                message: "unknown option \(arguments[i]); use --connections C --watchers K --per-turn T "
                    + "--positions N --rounds R")
        }
        i += 2
    }
    guard connections > watchers, watchers > 0, perTurn > 0, positions > 0, rounds > 0 else {
        throw SnapshotBenchmarkError(message: "need connections > watchers > 0 and positive counts")
    }
    print(
        "bookkeeping benchmark: \(connections) connections, \(watchers) watchers per position, "
            + "\(perTurn) position(s) per turn, \(positions) positions per round, \(rounds) rounds")
    print("round  flat ns/delivery  dictionary ns/delivery  dictionary / flat")
    let results = BookkeepingBenchmark.run(
        connections: connections, watchers: watchers, perTurn: perTurn, positions: positions, rounds: rounds)
    for (n, round) in results.enumerated() {
        print(
            "\(n + 1)".leftPad(5), fixed(round.flat).leftPad(17), fixed(round.dictionary).leftPad(23),
            fixed(round.dictionary / round.flat, digits: 2).leftPad(18))
    }
}

private func fixed(_ value: Double, digits: Int = 1) -> String {
    let scale = digits == 2 ? 100.0 : 10.0
    let rounded = (value * scale).rounded() / scale
    return "\(rounded)"
}

extension String {
    fileprivate func leftPad(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
