// The `stats` event's fields (see docs/PROTOCOL.md for each one and its unit). Figures that may be unknown are
// written as null rather than left out, so the shape never changes.
import CairnCore
import CairnWire

extension StatsSnapshot {
    /// The fields of the `stats` event (see docs/PROTOCOL.md for each one and its unit).
    func write(rates: StatsRates?, to w: inout JSONWriter) {
        let s = self
        func ms(_ ns: UInt64?) -> Double? { ns.map { (Double($0) / 1_000).rounded() / 1_000 } }
        func rounded(_ v: Double) -> Double { (v * 10).rounded() / 10 }
        // Figures that may be unknown are written as null rather than left out, so the shape never changes.
        func put(_ key: StaticString, _ value: Double?, _ w: inout JSONWriter) {
            if let value { w.field(key, value) } else { w.nullField(key) }
        }
        w.field("ts", s.ts)
        w.field("uptime_s", rounded(s.uptimeSeconds))
        w.key("connections")
        w.beginObject()
        w.field("total", s.connections)
        w.field("authenticated", s.authenticated)
        w.field("watching", s.watching)
        w.field("stats", s.statsWatchers)
        w.field("opened_total", Int64(clamping: s.connectionsOpened))
        w.endObject()
        w.key("traffic")
        w.beginObject()
        put("messages_in_per_s", rates.map { rounded($0.messagesIn) }, &w)
        put("messages_out_per_s", rates.map { rounded($0.messagesOut) }, &w)
        put("bytes_in_per_s", rates.map { rounded($0.bytesIn) }, &w)
        put("bytes_out_per_s", rates.map { rounded($0.bytesOut) }, &w)
        w.field("messages_in_total", Int64(clamping: s.messagesReceived))
        w.field("messages_out_total", Int64(clamping: s.messagesSent))
        w.field("bytes_in_total", Int64(clamping: s.bytesReceived))
        w.field("bytes_out_total", Int64(clamping: s.bytesSent))
        w.endObject()
        w.key("fanout")
        w.beginObject()
        put("latency_p50_ms", ms(s.fanoutP50Ns), &w)
        put("latency_p99_ms", ms(s.fanoutP99Ns), &w)
        w.field("deliveries", Int64(clamping: s.fanoutSamples))
        w.field("deliveries_total", Int64(clamping: s.deliveries))
        w.field("pending_coalesced", s.pendingCoalesced)
        w.field("pending_bytes", s.pendingOutboundBytes)
        w.endObject()
        w.key("loop")
        w.beginObject()
        put("lag_p99_ms", ms(s.loopLagP99Ns), &w)
        put("lag_max_ms", ms(s.loopLagMaxNs), &w)
        w.endObject()
        w.key("live")
        w.beginObject()
        w.field("positions", s.positionsLive)
        w.field("positions_accepted_total", Int64(clamping: s.positionsAccepted))
        if let relics = s.relicsLive { w.field("relics", relics) } else { w.nullField("relics") }
        w.endObject()
        w.key("snapshot")
        if let snap = s.lastSnapshot {
            w.beginObject()
            w.field("age_s", rounded(Double(snap.ageMs) / 1000))
            w.field("duration_ms", snap.durationMs)
            w.field("rows", snap.rows)
            w.endObject()
        } else {
            w.null()
        }
        w.key("store")
        w.beginObject()
        w.field("operations_in_flight", s.operationsInFlight)
        w.field("pending_rows", s.pendingSnapshotRows)
        w.endObject()
        w.key("process")
        w.beginObject()
        if let r = s.residentBytes { w.field("resident_bytes", r) } else { w.nullField("resident_bytes") }
        w.field("uptime_s", rounded(s.uptimeSeconds))
        w.endObject()
        w.key("cluster")  // null on a single node
        if let cluster = s.cluster {
            w.beginObject()
            w.field("redis", cluster.redisUp ? "up" : "down")
            w.field("reconnects_total", Int64(clamping: cluster.reconnects))
            w.field("published_total", Int64(clamping: cluster.published))
            w.field("received_total", Int64(clamping: cluster.received))
            w.field("dropped_total", Int64(clamping: cluster.dropped))
            w.field("node_name_conflicts_total", Int64(clamping: cluster.nodeNameConflicts))
            w.endObject()
        } else {
            w.null()
        }
    }
}
