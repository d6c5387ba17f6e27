import CairnCore
import CairnGeo
// The live relics in memory and who is standing in which. The hub keeps relic points in the `.relics` layer of its
// grid index for browsing ("what is within 2 km"); this book keeps the rest: the markers, a disk-cover index for
// roaming ("whose circle am I in", one cell read per move), a min-heap of expiry times for the sweep, which users
// are inside which relic (so `relic.appear` and `relic.vanish` go out once per crossing, not per move), and which
// connections were last shown which markers (so an expiry or deletion reaches the maps that show it). A user inside
// a relic was not necessarily told of it (one move announces only the nearest few): only those told hear that they
// left it or that it went away.
//
// Everything here is a plain value owned by the event loop; the hub turns its answers into events.
import CairnLoop
import CairnSpatial

/// Live relics, their expiry order and roaming membership.
struct RelicBook {
    private(set) var markers: [Int64: RelicMarker] = [:]
    /// Small circles on fine cells, large ones on coarse cells, so a move reads few candidates and a 5 km relic
    /// still registers in a few dozen cells rather than thousands.
    private var cover: DiskCoverIndex
    private var wideCover: DiskCoverIndex
    private let wideRadius: Double
    private var expiry = ExpiryHeap()
    /// Heap entries of relics removed before their time (skipped lazily; rebuilt away when they pile up).
    private var staleExpiries = 0
    private var perCreator: [Int64: Int] = [:]
    /// Relics each user is inside (and was told about).
    private var inside: [Int64: [Int64]] = [:]
    /// Users inside each relic.
    private var insiders: [Int64: Set<Int64>] = [:]
    /// (user, relic) pairs where the user was told of the relic (`relic.appear`).
    private var told: Set<Told> = []
    private struct Told: Hashable {
        var user: Int64
        var relic: Int64
    }
    /// Markers each connection was last shown by `relic.nearby`.
    private var browsed: [ConnectionID: [Int64]] = [:]
    /// Connections that were shown each relic.
    private var browsers: [Int64: Set<ConnectionID>] = [:]
    /// Reused by `roam` so a move allocates nothing in steady state.
    private var scratch: [Int64] = []

    /// `coverCellSize` is the fine cell; circles wider than four fine cells go on cells eight times as large.
    init(coverCellSize: Double) {
        cover = DiskCoverIndex(cellSize: coverCellSize)
        wideCover = DiskCoverIndex(cellSize: min(100_000, coverCellSize * 8))
        wideRadius = coverCellSize * 4
    }

    /// Live relics (expired ones leave at the next sweep).
    var count: Int { markers.count }

    /// Live relics left by `creator`.
    func count(of creator: Int64) -> Int { perCreator[creator] ?? 0 }

    /// The marker of a relic that is live at `now`; nil when unknown or expired.
    func live(_ id: Int64, at now: Int64) -> RelicMarker? {
        guard let marker = markers[id], !marker.isExpired(at: now) else { return nil }
        return marker
    }

    /// Adds a relic. Its point must also be put in the hub's `.relics` layer.
    mutating func add(_ marker: RelicMarker) {
        if let old = markers[marker.id] { _ = remove(old.id) }
        markers[marker.id] = marker
        perCreator[marker.creatorID, default: 0] += 1
        if let centre = GeoPoint(lat: marker.lat, lon: marker.lon) {
            if marker.radius > wideRadius {
                wideCover.insert(marker.id, center: centre, radius: marker.radius)
            } else {
                cover.insert(marker.id, center: centre, radius: marker.radius)
            }
        }
        if let expiresAt = marker.expiresAt { expiry.push(expiresAt, marker.id) }
    }

    /// Who should hear that a relic is gone: the users inside it and the connections shown it.
    struct Audience {
        var users: Set<Int64> = []
        var connections: Set<ConnectionID> = []
    }

    /// Removes a relic and returns it with the audience that should be told; nil when it was not live.
    mutating func remove(_ id: Int64) -> (RelicMarker, Audience)? {
        guard let removed = take(id) else { return nil }
        if removed.0.expiresAt != nil {
            staleExpiries += 1
            if staleExpiries > 1024 && staleExpiries > expiry.count / 2 { rebuildExpiry() }
        }
        return removed
    }

    private mutating func rebuildExpiry() {
        expiry = ExpiryHeap()
        for marker in markers.values { if let at = marker.expiresAt { expiry.push(at, marker.id) } }
        staleExpiries = 0
    }

    private mutating func take(_ id: Int64) -> (RelicMarker, Audience)? {
        guard let marker = markers.removeValue(forKey: id) else { return nil }
        let left = (perCreator[marker.creatorID] ?? 1) - 1
        perCreator[marker.creatorID] = left > 0 ? left : nil
        if !cover.remove(id) { wideCover.remove(id) }
        var audience = Audience()
        if let users = insiders.removeValue(forKey: id) {
            audience.users = users.filter { told.remove(Told(user: $0, relic: id)) != nil }
            for user in users {
                inside[user]?.removeAll { $0 == id }
                if inside[user]?.isEmpty ?? false { inside[user] = nil }
            }
        }
        if let connections = browsers.removeValue(forKey: id) {
            audience.connections = connections
            for connection in connections {
                browsed[connection]?.removeAll { $0 == id }
            }
        }
        return (marker, audience)
    }

    /// Removes every relic expired at `now` and calls `body` for each with its audience. Costs nothing when
    /// nothing is due.
    mutating func sweep(now: Int64, _ body: (RelicMarker, Audience) -> Void) {
        while let due = expiry.popDue(now) {
            // Lazy deletion: skip entries whose relic was deleted or no longer expires then.
            guard let marker = markers[due.id], marker.expiresAt == due.time else {
                staleExpiries = max(0, staleExpiries - 1)
                continue
            }
            if let (gone, audience) = take(due.id) { body(gone, audience) }
        }
    }

    /// The user moved to `point`: calls `entered` for each live relic they are now inside and were not, and `left`
    /// for each they were inside and are not any more. Reads one cell of the cover index; allocates nothing when
    /// the user is in no relic before or after, and otherwise reuses its buffers (membership lists are kept sorted
    /// and compared by a merge, linear in their length).
    mutating func roam(
        _ user: Int64, to point: GeoPoint, now: Int64,
        entered: (RelicMarker) -> Void, left: (Int64) -> Void
    ) {
        var current: [Int64] = []
        swap(&current, &scratch)  // owned, so appending reuses its capacity instead of copying
        current.removeAll(keepingCapacity: true)
        cover.forEach(containing: point) { id, _ in current.append(id) }
        wideCover.forEach(containing: point) { id, _ in current.append(id) }
        let previous = inside[user] ?? []
        if current.isEmpty && previous.isEmpty {
            scratch = current
            return
        }
        current.sort()
        // Expired relics (not yet swept) are nobody's to enter; one already entered stays entered until the sweep
        // tells its insiders it expired (rather than a move reporting that they walked out of it).
        if expiry.count > 0 {
            current.removeAll { id in
                (markers[id]?.isExpired(at: now) ?? true) && !previous.contains(id)
            }
        }
        var i = 0
        var j = 0
        while i < previous.count || j < current.count {
            if j == current.count || (i < previous.count && previous[i] < current[j]) {
                if dropInsider(user, of: previous[i]) { left(previous[i]) }
                i += 1
            } else if i == previous.count || current[j] < previous[i] {
                let id = current[j]
                insiders[id, default: []].insert(user)
                if let marker = markers[id] { entered(marker) }
                j += 1
            } else {
                i += 1
                j += 1
            }
        }
        if previous == current {
            scratch = current
            return
        }
        // The old list's storage becomes the next scratch buffer.
        if current.isEmpty {
            inside[user] = nil
            scratch = current
        } else {
            inside[user] = current
            scratch = previous
        }
    }

    /// Records that `user` is inside `relic` (a relic was left where they stand) and is told of it; false when
    /// already recorded.
    mutating func enter(_ user: Int64, _ relic: Int64) -> Bool {
        guard markers[relic] != nil, insiders[relic, default: []].insert(user).inserted else { return false }
        var ids = inside.removeValue(forKey: user) ?? []
        ids.insert(relic, at: ids.firstIndex { $0 > relic } ?? ids.count)
        inside[user] = ids
        tell(user, relic)
        return true
    }

    /// Records that `user` was told of `relic`, which they are inside.
    mutating func tell(_ user: Int64, _ relic: Int64) { told.insert(Told(user: user, relic: relic)) }

    /// True when `user` was told of `relic` and has not left it since.
    func wasTold(_ user: Int64, _ relic: Int64) -> Bool { told.contains(Told(user: user, relic: relic)) }

    /// True when `user` was told they are inside `relic`.
    func isInside(_ user: Int64, _ relic: Int64) -> Bool { insiders[relic]?.contains(user) ?? false }

    /// The user went offline: forget where they stand, so the next move after reconnecting reports afresh.
    mutating func forget(user: Int64) {
        guard let ids = inside.removeValue(forKey: user) else { return }
        for id in ids { dropInsider(user, of: id) }
    }

    /// Removes `user` from `relic`'s insiders; true when they had been told of it.
    @discardableResult
    private mutating func dropInsider(_ user: Int64, of relic: Int64) -> Bool {
        insiders[relic]?.remove(user)
        if insiders[relic]?.isEmpty ?? false { insiders[relic] = nil }
        return told.isEmpty ? false : told.remove(Told(user: user, relic: relic)) != nil
    }

    /// The markers `connection` now shows (the last `relic.nearby` answer replaces the previous one).
    mutating func show(_ ids: [Int64], to connection: ConnectionID) {
        forget(connection: connection)
        guard !ids.isEmpty else { return }
        browsed[connection] = ids
        for id in ids { browsers[id, default: []].insert(connection) }
    }

    /// The connection closed.
    mutating func forget(connection: ConnectionID) {
        guard let ids = browsed.removeValue(forKey: connection) else { return }
        for id in ids {
            browsers[id]?.remove(connection)
            if browsers[id]?.isEmpty ?? false { browsers[id] = nil }
        }
    }
}
