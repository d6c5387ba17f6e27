// Live positions and the observer fan-out — the hot path. A `pos` is validated, compared with the user's latest
// fix (an older one is kept as history, never pushed), stored in memory and the spatial index, marked dirty for the
// next snapshot, and pushed to every friend who is watching, at the level that friend may see. Each level is
// encoded at most once per update and the same bytes are handed to every watcher; the transport keeps only the
// latest pending position per friend for each watcher, so a slow reader costs one slot per friend, not a queue.
import CairnGeo
import CairnSpatial
import CairnWire

extension Hub {
    func reportPosition(id: Int64?, from client: Client, user: User) throws(WireError) {
        let now = clock.now()
        var fix = Fix(lat: try message.requireDouble("lat"), lon: try message.requireDouble("lon"), ts: now)
        guard (-90...90).contains(fix.lat) else { throw .badRequest("field 'lat' must be between -90 and 90") }
        guard (-180...180).contains(fix.lon) else { throw .badRequest("field 'lon' must be between -180 and 180") }
        fix.acc = try optional("acc", in: 0...1_000_000, unit: "m")
        fix.alt = try optional("alt", in: -20_000...1_000_000, unit: "m")
        fix.spd = try optional("spd", in: 0...100_000, unit: "m/s")
        fix.bat = try optional("bat", in: 0...100, unit: "%")
        if let hdg = try message.double("hdg") {
            guard hdg >= 0 && hdg < 360 else { throw .badRequest("field 'hdg' must be in [0, 360) degrees") }
            fix.hdg = hdg
        }
        if let ts = try message.int("ts") {
            guard ts > 0 else { throw .badRequest("field 'ts' must be a positive number of milliseconds since the epoch") }
            guard ts <= now + configuration.maxFutureMs else {
                throw .badRequest("field 'ts' is more than \(configuration.maxFutureMs / 1000) s in the future")
            }
            fix.ts = ts
        }

        let outcome = acceptFix(fix, for: user.id, now: now)
        guard let id else { return }
        writer.reset()
        Envelope.ok(id: id, into: &writer) { w in
            switch outcome {
            case .stale: w.key("stale"); w.bool(true)
            case .flagged: w.key("flagged"); w.bool(true)
            case .accepted: break
            }
        }
        flush(to: client.id)
    }

    /// What became of a validated fix.
    public enum FixOutcome: Sendable, Equatable {
        /// It is the new latest position and was pushed to watching friends.
        case accepted
        /// As `accepted`, but its implied speed exceeded `maxSpeed`.
        case flagged
        /// It is older than the latest one: kept as history, not pushed.
        case stale
    }

    /// The position path shared by every source of positions: compares with the latest fix, keeps late ones
    /// as history, flags implausible speed, updates memory and the index, marks the user for the next snapshot
    /// and fans out. `fix` must already be validated.
    @discardableResult
    public func acceptFix(_ fix: Fix, for me: Int64, now: Int64) -> FixOutcome {
        var fix = fix
        let previous = fixes[me]
        if let previous, fix.ts < previous.ts {
            // Late: history, not news. (An equal timestamp is a later arrival of the same instant and replaces.)
            keepLate(StoredFix(userID: me, fix: fix))
            return .stale
        }
        if let previous, fix.ts > previous.ts,
           let a = GeoPoint(lat: previous.lat, lon: previous.lon), let b = GeoPoint(lat: fix.lat, lon: fix.lon) {
            let seconds = Double(fix.ts - previous.ts) / 1000
            fix.flagged = a.distance(to: b) / seconds > configuration.maxSpeed
        }
        fixes[me] = fix
        let point = GeoPoint(lat: fix.lat, lon: fix.lon)
        if let point { index.upsert(me, at: point, in: .users) }
        dirty.insert(me)
        fanOut(me, fix, previous: previous, now: now)
        if let point, relics.count > 0, sessions[me] != nil { roamRelics(me, to: point, now: now) }
        return fix.flagged ? .flagged : .accepted
    }

    private func optional(_ key: String, in range: ClosedRange<Double>, unit: String) throws(WireError) -> Double? {
        guard let value = try message.double(key) else { return nil }
        guard range.contains(value) else {
            throw .badRequest("field '\(key)' must be between \(Self.plain(range.lowerBound)) and \(Self.plain(range.upperBound)) \(unit)")
        }
        return value
    }

    private static func plain(_ v: Double) -> String { v == v.rounded() ? String(Int64(v)) : String(v) }

    private func keepLate(_ fix: StoredFix) {
        // Bounded: a client replaying a long history cannot grow memory without limit between snapshots.
        if lateFixes.count >= 100_000 { lateFixes.removeFirst(lateFixes.count - 99_999) }
        lateFixes.append(fix)
    }

    /// Pushes `fix` of `owner` to every watching friend at the level they may see.
    func fanOut(_ owner: Int64, _ fix: Fix, previous: Fix?, now: Int64) {
        guard let outbound else { return }
        var precise: [UInt8]?
        var approx: [UInt8]?
        var approxChecked = false
        for friend in graph.friends(of: owner) {
            guard let connections = watchers[friend], !connections.isEmpty else { continue }
            let bytes: [UInt8]
            switch rules.level(owner: owner, viewer: friend, now: now) {
            case .hidden:
                continue
            case .precise:
                if precise == nil { precise = encodePosition(owner, fix, level: .precise) }
                bytes = precise!
            case .approximate:
                if !approxChecked {
                    approxChecked = true
                    // A user moving inside one cell has nothing new to tell approximate viewers.
                    let cell = approximate.snap(lat: fix.lat, lon: fix.lon)
                    let before = previous.map { approximate.snap(lat: $0.lat, lon: $0.lon) }
                    if before == nil || before! != cell { approx = encodePosition(owner, fix, level: .approximate) }
                }
                guard let approx else { continue }
                bytes = approx
            }
            for connection in connections { outbound.sendLatest(connection, key: owner, bytes) }
        }
    }

    /// The `pos` event for `owner` as `level` allows, or nil for hidden.
    func encodePosition(_ owner: Int64, _ fix: Fix, level: ShareLevel) -> [UInt8]? {
        guard level != .hidden else { return nil }
        writer.reset()
        Envelope.event("pos", into: &writer) { w in writePosition(owner, fix, level: level, to: &w) }
        return writer.bytes
    }

    /// The fields of a position as `level` allows (never called for hidden).
    func writePosition(_ owner: Int64, _ fix: Fix, level: ShareLevel, to w: inout JSONWriter) {
        w.key("user"); w.int(owner)
        if level == .approximate {
            let cell = approximate.snap(lat: fix.lat, lon: fix.lon)
            w.key("lat"); w.double(cell.lat)
            w.key("lon"); w.double(cell.lon)
            w.key("approx"); w.bool(true)
            w.key("ts"); w.int(fix.ts)
            return
        }
        w.key("lat"); w.double(fix.lat)
        w.key("lon"); w.double(fix.lon)
        if let v = fix.acc { w.key("acc"); w.double(v) }
        if let v = fix.alt { w.key("alt"); w.double(v) }
        if let v = fix.spd { w.key("spd"); w.double(v) }
        if let v = fix.hdg { w.key("hdg"); w.double(v) }
        if let v = fix.bat { w.key("bat"); w.double(v) }
        w.key("ts"); w.int(fix.ts)
        if fix.flagged { w.key("flagged"); w.bool(true) }
    }

    func watch(id: Int64?, from client: Client, user: User) {
        if !client.watching {
            client.watching = true
            watchers[user.id, default: []].append(client.id)
        }
        let now = clock.now()
        replyOK(client, id: id) { w in
            w.key("positions"); w.beginArray()
            for friend in graph.friends(of: user.id).sorted() {
                guard let fix = fixes[friend] else { continue }
                let level = rules.level(owner: friend, viewer: user.id, now: now)
                guard level != .hidden else { continue }
                w.beginObject()
                writePosition(friend, fix, level: level, to: &w)
                w.endObject()
            }
            w.endArray()
        }
    }

    func unwatch(id: Int64?, from client: Client, user: User) {
        stopWatching(client, user: user.id)
        replyOK(client, id: id) { _ in }
    }

    func stopWatching(_ client: Client, user: Int64) {
        guard client.watching else { return }
        client.watching = false
        watchers[user]?.removeAll { $0 == client.id }
        if watchers[user]?.isEmpty ?? false { watchers[user] = nil }
        for friend in graph.friends(of: user) { outbound?.dropLatest(client.id, key: friend) }
    }

    /// Sends `owner`'s current position (at the level `viewer` may see) to `viewer`'s watching connections;
    /// if hidden, withdraws anything pending and says so with `pos.hidden`.
    func sendCurrentPosition(of owner: Int64, toWatchersOf viewer: Int64) {
        guard let connections = watchers[viewer], !connections.isEmpty, let outbound else { return }
        let level = rules.level(owner: owner, viewer: viewer, now: clock.now())
        if level == .hidden {
            writer.reset()
            Envelope.event("pos.hidden", into: &writer) { w in w.key("user"); w.int(owner) }
            let bytes = writer.bytes
            for c in connections { outbound.sendLatest(c, key: owner, bytes) }
            return
        }
        guard let fix = fixes[owner], let bytes = encodePosition(owner, fix, level: level) else { return }
        for c in connections { outbound.sendLatest(c, key: owner, bytes) }
    }

    /// Withdraws `owner`'s pending position from `viewer`'s watching connections.
    func dropPendingPositions(of owner: Int64, forWatchersOf viewer: Int64) {
        guard let connections = watchers[viewer] else { return }
        for c in connections { outbound?.dropLatest(c, key: owner) }
    }
}
