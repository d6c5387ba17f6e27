// The stats channel's ops, for operators: stats.watch and stats.unwatch.
import CairnCore
import CairnStats
import CairnWire

enum StatsOps {
    static func register(in table: inout OpTable, channel: StatsChannel) {
        table.slow(
            "stats.watch", decode: Fields.none,
            handle: { caller, _, done in channel.watch(caller.member, done) },
            encode: { interval, w in
                w.key("interval_ms")
                w.int(interval)
            })
        table.fast(
            "stats.unwatch", decode: Fields.none,
            handle: { caller, _ throws(DomainError) in channel.unwatch(caller.connection) },
            encode: Fields.empty)
    }
}
