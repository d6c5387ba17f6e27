// cairn-bench: measurements are part of the product (docs/BENCHMARKS.md records the results and commands).
// Each subcommand measures one thing against a peer in the same run, because on a shared 2-core machine only
// side-by-side ratios and speed-independent counts (allocations) are results. Always build with -c release.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let usage = """
    usage: cairn-bench codec [--rounds N] [--iterations N] [--only cairn|foundation]
           cairn-bench index [options: see docs/BENCHMARKS.md]
           cairn-bench snapshot [--positions N] [--rounds R]
           cairn-bench fanout [--friends K] [--positions N] [--rounds R] [--relics N]
           cairn-bench bookkeeping [--connections C] [--watchers K] [--per-turn T] [--positions N] [--rounds R]
           cairn-bench places [--points N] [--queries N] [--brute N] [--limit K] [--radius M]
           cairn-bench pictures [--pictures N] [--queries N] [--check N]
      codec     decode+encode of one position message: CairnWire against Foundation's JSONDecoder/JSONEncoder.
                --only runs a single codec for exactly --iterations operations, without timing output, so that
                `valgrind --tool=memcheck` heap totals at two iteration counts give allocations per operation.
      index     the spatial grid index over 1M points against a brute-force scan in the same run.
      snapshot  the longest event-loop stall while N changed positions are flushed to SQLite (default 100,000).
      fanout    the hub's cost per position and per delivery: one user with K watching friends (default 20).
      bookkeeping  the transport's per-delivery bookkeeping without sockets: dense connection table and flat
                latest-wins slots against the dictionaries they replaced, in the same run.
      places    k-nearest over 1M worldwide places (SphereTree) against a brute-force haversine scan.
      pictures  picture.nearby pages of 50 over 1M stored pictures in a city: query plans and latency per page.
    """

let arguments = Array(CommandLine.arguments.dropFirst())
let rest = Array(arguments.dropFirst())

/// Runs one benchmark; a bad option prints the error and the usage and exits 2.
func run(_ body: () throws -> Void) {
    do {
        try body()
    } catch {
        print("cairn-bench: \(error)\n\(usage)")
        exit(2)
    }
}

switch arguments.first {
case "codec": run { try CodecBenchmark(arguments: rest).run() }
case "index": runIndexBenchmark(arguments: rest)
case "fanout": run { try runFanoutBenchmark(arguments: rest) }
case "bookkeeping": run { try runBookkeepingBenchmark(arguments: rest) }
case "snapshot": run { try runSnapshotBenchmark(arguments: rest) }
case "places": run { try runPlacesBenchmark(arguments: rest) }
case "pictures": run { try runPicturesBenchmark(arguments: rest) }
default:
    print(usage)
    exit(arguments.isEmpty || arguments.first == "--help" ? 0 : 2)
}
