// The stats channel: `stats.watch` / `stats.unwatch` for operators, and the `stats` event pushed to them once a
// second. Whether a user is an operator is asked of the `RoleStore` off the loop on every `stats.watch`, so a
// grant or revocation made with `cairn user grant-ops` / `revoke-ops` counts from the next request, no restart.
// The transport calls `publishStats` from its one-second sweep; with nobody watching that only starts new latency
// windows and remembers four counters (for the next rates), so an unwatched channel costs next to nothing.
import CairnWire

/// The stats channel's state on the hub.
struct StatsChannel {
    /// Connections watching, in the order they started.
    var watchers: [ConnectionID] = []
    /// The traffic counters at the previous tick, for per-second rates.
    var previous: TrafficTotals?
}

extension Hub {
    /// True while at least one connection watches the stats channel.
    public var isStatsWatched: Bool { !stats.watchers.isEmpty }

    func watchStats(id: Int64?, from client: Client, user: User) {
        guard let roles else {
            fail(client, id: id, op: "stats.watch", WireError(.forbidden, "the stats channel is for operators"))
            return
        }
        let me = user.id
        start(client, id: id, op: "stats.watch", { () async throws(WireError) -> Bool in
            try await Self.storage { try await roles.hasRole(.ops, userID: me) }
        }, then: { client, isOps in
            guard let client else { return }
            // The connection may have logged out or switched accounts while the role was checked.
            guard client.user?.id == me else {
                self.fail(client, id: id, op: "stats.watch", WireError(.unauthorized, "the session ended"))
                return
            }
            guard isOps else {
                self.fail(client, id: id, op: "stats.watch",
                          WireError(.forbidden, "the stats channel is for operators (cairn user grant-ops)"))
                return
            }
            if !self.stats.watchers.contains(client.id) { self.stats.watchers.append(client.id) }
            self.replyOK(client, id: id) { w in w.key("interval_ms"); w.int(1000) }
        })
    }

    func unwatchStats(id: Int64?, from client: Client) {
        stopWatchingStats(client.id)
        replyOK(client, id: id) { _ in }
    }

    func stopWatchingStats(_ connection: ConnectionID) {
        stats.watchers.removeAll { $0 == connection }
    }

    /// Every figure now. `transport` supplies what only the transport knows. Reads the current latency windows
    /// without resetting them.
    public func statsSnapshot(transport: TransportGauges) -> StatsSnapshot {
        let now = clock.now()
        let t = telemetry
        return StatsSnapshot(
            ts: now,
            connections: connectionCount, authenticated: authenticatedCount, watching: watchingCount,
            statsWatchers: stats.watchers.count,
            connectionsOpened: t.connectionsOpened,
            messagesReceived: t.messagesReceived, messagesSent: t.messagesSent,
            bytesReceived: t.bytesReceived, bytesSent: t.bytesSent,
            positionsAccepted: t.positionsAccepted, deliveries: t.deliveries,
            fanoutP50Ns: t.fanoutWindow.quantile(0.5), fanoutP99Ns: t.fanoutWindow.quantile(0.99),
            fanoutSamples: t.fanoutWindow.count,
            loopLagP99Ns: t.loopLagWindow.quantile(0.99),
            loopLagMaxNs: t.loopLagWindow.count > 0 ? t.loopLagWindow.max : nil,
            pendingCoalesced: transport.pendingCoalesced, pendingOutboundBytes: transport.pendingOutboundBytes,
            positionsLive: livePositions, relicsLive: relicCount?(),
            lastSnapshot: lastFlush.map { SnapshotReading(ageMs: now - $0.at, durationMs: $0.durationMs, rows: $0.rows) },
            operationsInFlight: inFlight, pendingSnapshotRows: dirty.count + lateFixes.count,
            residentBytes: transport.residentBytes, uptimeSeconds: transport.uptimeSeconds)
    }

    /// Once a second (the transport's sweep): pushes a `stats` event to every operator watching and starts new
    /// latency windows. `transport` is called only when someone watches.
    public func publishStats(transport: () -> TransportGauges) {
        defer { telemetry.resetWindows() }
        guard !stats.watchers.isEmpty else {
            let t = telemetry
            stats.previous = TrafficTotals(ts: clock.now(), messagesIn: t.messagesReceived, messagesOut: t.messagesSent,
                                           bytesIn: t.bytesReceived, bytesOut: t.bytesSent)
            return
        }
        let snapshot = statsSnapshot(transport: transport())
        let rates = stats.previous.flatMap { StatsRates(from: $0, to: snapshot.totals) }
        stats.previous = snapshot.totals
        writer.reset()
        Envelope.event("stats", into: &writer) { w in Self.writeStats(snapshot, rates: rates, to: &w) }
        for connection in stats.watchers { flush(to: connection) }
    }

    /// The fields of the `stats` event (see docs/PROTOCOL.md for each one and its unit).
    static func writeStats(_ s: StatsSnapshot, rates: StatsRates?, to w: inout JSONWriter) {
        func ms(_ ns: UInt64?) -> Double? { ns.map { (Double($0) / 1_000).rounded() / 1_000 } }
        func rounded(_ v: Double) -> Double { (v * 10).rounded() / 10 }
        // Figures that may be unknown are written as null rather than left out, so the shape never changes.
        func put(_ key: StaticString, _ value: Double?, _ w: inout JSONWriter) {
            if let value { w.field(key, value) } else { w.nullField(key) }
        }
        w.field("ts", s.ts)
        w.field("uptime_s", rounded(s.uptimeSeconds))
        w.key("connections"); w.beginObject()
        w.field("total", s.connections)
        w.field("authenticated", s.authenticated)
        w.field("watching", s.watching)
        w.field("stats", s.statsWatchers)
        w.field("opened_total", Int64(clamping: s.connectionsOpened))
        w.endObject()
        w.key("traffic"); w.beginObject()
        put("messages_in_per_s", rates.map { rounded($0.messagesIn) }, &w)
        put("messages_out_per_s", rates.map { rounded($0.messagesOut) }, &w)
        put("bytes_in_per_s", rates.map { rounded($0.bytesIn) }, &w)
        put("bytes_out_per_s", rates.map { rounded($0.bytesOut) }, &w)
        w.field("messages_in_total", Int64(clamping: s.messagesReceived))
        w.field("messages_out_total", Int64(clamping: s.messagesSent))
        w.field("bytes_in_total", Int64(clamping: s.bytesReceived))
        w.field("bytes_out_total", Int64(clamping: s.bytesSent))
        w.endObject()
        w.key("fanout"); w.beginObject()
        put("latency_p50_ms", ms(s.fanoutP50Ns), &w)
        put("latency_p99_ms", ms(s.fanoutP99Ns), &w)
        w.field("deliveries", Int64(clamping: s.fanoutSamples))
        w.field("deliveries_total", Int64(clamping: s.deliveries))
        w.field("pending_coalesced", s.pendingCoalesced)
        w.field("pending_bytes", s.pendingOutboundBytes)
        w.endObject()
        w.key("loop"); w.beginObject()
        put("lag_p99_ms", ms(s.loopLagP99Ns), &w)
        put("lag_max_ms", ms(s.loopLagMaxNs), &w)
        w.endObject()
        w.key("live"); w.beginObject()
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
        w.key("store"); w.beginObject()
        w.field("operations_in_flight", s.operationsInFlight)
        w.field("pending_rows", s.pendingSnapshotRows)
        w.endObject()
        w.key("process"); w.beginObject()
        if let r = s.residentBytes { w.field("resident_bytes", r) } else { w.nullField("resident_bytes") }
        w.field("uptime_s", rounded(s.uptimeSeconds))
        w.endObject()
    }
}
